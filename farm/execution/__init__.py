"""Executors: where a run's jobs run (a local process pool or Celery workers), handed to
``farm.fleet``, which never imports them."""
