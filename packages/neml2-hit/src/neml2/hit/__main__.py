"""``python -m neml2.hit``: same as the ``neml2-hit`` command."""

import sys

from ._cli import main

sys.exit(main())
