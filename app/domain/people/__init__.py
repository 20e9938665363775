"""Rules about people: who may read which rows (access), what every Rhythm staff action asks, and
the words the audit trail shows for what people and the product did. Nothing here imports a
capability."""
