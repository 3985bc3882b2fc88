import sys

from tui_lab.cli import main

sys.exit(main())
