"""`python -m app.eval`."""

import sys

from app.eval.cli import main

sys.exit(main())
