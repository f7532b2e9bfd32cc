"""The WSGI entry point gunicorn loads in each worker: ``api_gateway.wsgi:app``.

Imported after the fork (the gunicorn config does not preload the app), so
every worker builds its own app and, on first use, its own engine channel.
"""
from __future__ import annotations

import logging
import sys

from api_gateway.app import create_app
from api_gateway.config import from_env

_cfg = from_env()
if not logging.getLogger().handlers:  # the gateway's own log lines, next to gunicorn's on stderr
    logging.basicConfig(level=_cfg.log_level, stream=sys.stderr,
                        format="[%(asctime)s] [%(process)d] [%(levelname)s] %(name)s: %(message)s")
app = create_app(_cfg)
