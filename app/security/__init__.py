"""Secrets the product keeps for others (destination credentials), encrypted at rest."""
