"""Procrastinate's tables, on PostgreSQL

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 00:30:00.000000

JOB_BACKEND=procrastinate keeps the timers as Procrastinate jobs in the same database. Its
schema is the one the installed Procrastinate ships (procrastinate.schema.SchemaManager), applied
here so that the app's start and Heroku's release phase bring it with everything else (under the
migration lock of alembic/env.py). It is created on every PostgreSQL database, whichever backend
runs, so switching backends needs no migration. SQLite has no Procrastinate: nothing there.

Upgrading Procrastinate to a release that changes its schema needs a migration of ours applying
the release's files from SchemaManager.get_migrations_path().
"""

from collections.abc import Sequence

from alembic import op
from sqlalchemy.util import await_

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    # Imported here: on SQLite, Procrastinate and psycopg under it (12 MiB) would stay in the
    # memory of the process that migrated, the web process.
    from procrastinate.schema import SchemaManager

    # The schema is a script of many statements; asyncpg runs such a script (without
    # parameters) as one simple query, in this migration's transaction.
    driver = bind.connection.driver_connection
    assert driver is not None
    await_(driver.execute(SchemaManager.get_schema()))


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    # Everything the schema made is named procrastinate_*: its tables (with their triggers
    # and indexes), then its functions and types.
    op.execute(
        """
        DO $$
        DECLARE item record;
        BEGIN
          FOR item IN SELECT tablename FROM pg_tables
                      WHERE schemaname = current_schema() AND tablename LIKE 'procrastinate\\_%'
          LOOP EXECUTE format('DROP TABLE IF EXISTS %I CASCADE', item.tablename); END LOOP;
          FOR item IN SELECT p.oid::regprocedure AS signature FROM pg_proc p
                      JOIN pg_namespace n ON n.oid = p.pronamespace
                      WHERE n.nspname = current_schema() AND p.proname LIKE 'procrastinate\\_%'
          LOOP EXECUTE format('DROP FUNCTION IF EXISTS %s CASCADE', item.signature); END LOOP;
          FOR item IN SELECT t.typname FROM pg_type t
                      JOIN pg_namespace n ON n.oid = t.typnamespace
                      WHERE n.nspname = current_schema() AND t.typname LIKE 'procrastinate\\_%'
                        AND t.typtype IN ('e', 'c')
          LOOP EXECUTE format('DROP TYPE IF EXISTS %I CASCADE', item.typname); END LOOP;
        END $$;
        """
    )
