"""Access without staff for `ssh` hosts: the store logs in to each host of an order and runs
deploy/host/locagpu-host there (grant when paid, revoke when the rental ends, purge after the
retention). `ssh.py` speaks SSH, `services.py` moves the order and writes its timeline."""
