"""Rules for single values, the same for every capability: what a typed text or number may hold,
an email address, a time zone's name, and how a size or a length of time is written for people.
Nothing here imports a capability."""
