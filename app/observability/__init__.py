"""What tomo tells its operator while it runs: logs and metrics."""
