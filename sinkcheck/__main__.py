import sys

from sinkcheck.cli import main

sys.exit(main())
