"""The write machinery under the ops: find a record, check who may do what, compare-and-swap,
record the revision, and what every write shares (actors, sources, fields, values, answers).

It knows the op words (`stores.opnames`), never the ops built on it (`stores.ops`), nor the
services above them (`stores.services`).
"""
