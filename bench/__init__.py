"""`make bench`: the storefront's performance table (see run.py)."""
