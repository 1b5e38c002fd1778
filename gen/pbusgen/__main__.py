"""Run pbus-gen as `python -m pbusgen`."""

import sys

from .cli import main

sys.exit(main())
