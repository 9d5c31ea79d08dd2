"""The scheduler: plans fleet runs, enqueues jobs, runs one job, reconciles lost ones."""
