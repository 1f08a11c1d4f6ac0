"""`python -m scalefront` is the `scalefront` command."""

import sys

from scalefront.console import main

sys.exit(main())
