# SPDX-License-Identifier: Apache-2.0
"""python -m attnsel.tune"""
import sys

from .cli import main

sys.exit(main())
