"""A workspace's destinations, the one registry schedules and workspace packages deliver to:
adding, editing, testing and removing them, their secrets and the role setup an administrator
copies to a customer's account."""
