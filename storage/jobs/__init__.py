"""Reindex jobs: requests recorded in the database and run, one at a time, by a worker thread.

A reindex can take minutes, so a request only records a job and returns its
id; one worker thread per process runs the jobs in request order. Each state
change (queued → running → succeeded / failed / interrupted), the counts,
the progress and the per-file errors are written to the ``jobs`` table, so a
job can be watched while it runs and stays as history after a restart.

Rules (the admin API documents them to operators):

* **One at a time.** Jobs run strictly one after another, so two passes never
  compete for a shelf or for the conversion pool. A running job is never
  interrupted or changed by a new request.
* **Coalescing.** A request whose target — one shelf, or all shelves — already
  has a *queued* job (not yet running) is merged into that job and gets its id:
  paths are united (no paths means the whole shelf and absorbs any list), and
  ``force`` is or-ed. A request arriving while its target's job *runs* queues a
  new job that runs after it.
* **Recovery.** Jobs left queued or running by a process that is gone (same
  host, pid no longer alive, or our own pid from an earlier life) are marked
  ``interrupted`` at start-up; their rows are kept.

The pieces: :mod:`.requests` (what to reindex, checked), :mod:`.history` (the rows,
written and read), :mod:`.owners` (which process a row belongs to), :mod:`.runner`
(the queue and its worker thread).
"""

from docshelf.storage.jobs.history import JobCounts, JobHistory, JobProgress, JobRecord
from docshelf.storage.jobs.owners import owner_is_gone, process_owner
from docshelf.storage.jobs.requests import JobRequest, Submission, UnknownShelf, normalize_path
from docshelf.storage.jobs.runner import JobRunner, LiveProgress

__all__ = [
    "JobCounts",
    "JobHistory",
    "JobProgress",
    "JobRecord",
    "JobRequest",
    "JobRunner",
    "LiveProgress",
    "Submission",
    "UnknownShelf",
    "normalize_path",
    "owner_is_gone",
    "process_owner",
]
