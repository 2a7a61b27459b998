"""The machinery the domain runs on, behind one seam: queries compiled once (prepared), rows
inserted by COPY (bulk), the garbage collector kept out of a bulk pass (collector), work
handed to threads of this process (queues) and work handed on after a commit (handoff).

It reaches into Django's compiler, the database driver and threads so that the services,
selectors and models read as the domain. It imports nothing of the domain (import-linter).
"""
