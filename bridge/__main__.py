"""Allow ``python -m bridge``."""

import sys

from bridge.cli.main import main

sys.exit(main())
