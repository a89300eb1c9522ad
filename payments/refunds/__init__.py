"""Refunds proven on chain: what is owed back, the customer's address, the transaction staff
send and its check on chain (models, services, the chain check, the page section, admin)."""
