"""`python -m scalefront` is the `scalefront` command."""

import sys

from scalefront.cli import main

sys.exit(main())
