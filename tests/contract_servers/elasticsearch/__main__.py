"""``python -m tests.contract_servers.elasticsearch``: a server in the foreground."""

import sys

from tests.contract_servers.elasticsearch.process import main

sys.exit(main())
