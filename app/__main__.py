import sys

if sys.argv[1:2] == ["--session-lens-worker"]:     # a worker process (app.store.childproc.WORKERS)
    from .store.childproc import worker_main
    sys.exit(worker_main(sys.argv[2:]))

from .cli.main import main  # noqa: E402 - a worker never imports the CLI

sys.exit(main(sys.argv[1:]))
