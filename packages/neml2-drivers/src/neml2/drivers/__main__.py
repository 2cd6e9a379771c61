"""``python -m neml2.drivers INPUT DRIVER [overrides...]``: same as ``neml2-run``."""

import sys

from neml2.drivers._cli import run_main

sys.exit(run_main())
