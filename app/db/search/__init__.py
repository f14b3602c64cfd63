"""Searching the messages tomo stored (docs/tools.md#search_messages): `service` runs a query,
`terms` reads its words, `rows` is what every search shares, `sqlite` and `postgresql` each
database's way, `index` puts stored messages into SQLite's index in batches."""
