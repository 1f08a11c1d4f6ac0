"""``python -m scalefront.cli``."""

import sys

from scalefront.cli import main

sys.exit(main())
