"""`python -m app.replay FILE`."""

import sys

from app.replay.cli import main

sys.exit(main())
