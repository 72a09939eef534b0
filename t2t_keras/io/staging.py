"""Changing a set of files in a folder as one transaction.

``StagedFiles(folder, name)`` is how a command replaces files it owns in a
folder that may hold other things (``t2t-datagen --overwrite`` replacing a
problem's vocabulary and shards, ``t2t-import`` writing a vocabulary and its
record into a data dir):

1. ``begin()`` makes a fresh hidden folder ``folder/.NAME.staging`` and
   returns it; the command writes the new files there and checks them. The
   user's files are not touched, so a failure, a stop or a SIGKILL here
   leaves them as they were (the next ``begin`` or ``recover`` discards
   the unfinished staging folder).
2. ``commit(old)`` writes, with one rename, a journal naming the files to
   remove (``old``: the names the new set replaces) and those to move in,
   then ``apply``s it: the old files go, the new ones are renamed in, and
   the staging folder is removed last.
3. ``recover()``, called by every command that writes there before it
   begins, finishes a committed journal that a killed command left, so a
   kill after the commit leaves the new state once anything runs again;
   ``pending(folder)`` tells a reader that such a swap is unfinished.

Every step of ``apply`` can be done again: a name to remove that is also
moved in is not removed; a file moved already is not looked for again.
"""

import glob
import json
import os

from t2t_keras.io import files

JOURNAL = ".commit.json"
SUFFIX = ".staging"


class StagedFiles:
  """A transaction over the files of ``folder`` that one command owns;
  ``name`` tells the staging folders of two kinds of command apart."""

  def __init__(self, folder, name):
    self.folder = folder
    self.stage = os.path.join(folder, f".{name}{SUFFIX}")
    self.journal = os.path.join(self.stage, JOURNAL)

  def recover(self):
    """Finishes a committed swap or discards an unfinished staging folder;
    returns "finished", "discarded" or None (nothing was there)."""
    if os.path.isfile(self.journal):
      self.apply()
      return "finished"
    if os.path.lexists(self.stage):
      files.remove_tree(self.stage)
      return "discarded"
    return None

  def begin(self):
    """A new, empty staging folder (after ``recover``); its path."""
    self.recover()
    os.makedirs(self.stage)
    return self.stage

  def abort(self):
    """Removes the staging folder; the user's files stay as they were."""
    if not os.path.isfile(self.journal):
      files.remove_tree(self.stage)

  def commit(self, old=()):
    """Swaps the staged files in for ``old`` (names in ``folder``); the
    journal's rename is the moment the new state is chosen."""
    new = sorted(n for n in os.listdir(self.stage) if n != JOURNAL)
    files.write_atomic(self.journal, json.dumps(
        {"remove": sorted(set(old)), "add": new}).encode("utf-8"))
    self.apply()
    return new

  def apply(self):
    """Carries out the journal (again, if it was cut short)."""
    with open(self.journal, encoding="utf-8") as f:
      plan = json.load(f)
    for name in plan["remove"]:
      if name not in plan["add"]:
        files.remove(os.path.join(self.folder, name))
    for name in plan["add"]:
      staged = os.path.join(self.stage, name)
      if os.path.lexists(staged):
        files.replace(staged, os.path.join(self.folder, name))
    files.remove(self.journal)
    files.remove_tree(self.stage)


def pending(folder):
  """The staging folders of ``folder`` holding a committed swap that is
  not finished (a command was killed while swapping): their paths."""
  return sorted(os.path.dirname(p) for p in glob.glob(os.path.join(
      glob.escape(folder), f".*{SUFFIX}", JOURNAL)))


class StagedFolder:
  """A new folder made whole beside where it goes, then renamed into
  place: ``begin()`` gives ``.NAME.staging`` beside ``path`` (an
  unfinished one from a killed command is discarded first), ``commit()``
  renames it to ``path``, which must not exist or be an empty folder."""

  def __init__(self, path):
    self.path = os.path.abspath(path)
    parent, name = os.path.split(self.path)
    self.stage = os.path.join(parent, f".{name}{SUFFIX}")

  def begin(self):
    os.makedirs(os.path.dirname(self.path), exist_ok=True)
    if os.path.lexists(self.stage):
      files.remove_tree(self.stage)
    os.makedirs(self.stage)
    return self.stage

  def abort(self):
    files.remove_tree(self.stage)

  def commit(self, replace=False):
    """Renames the staged folder to ``path``; ``replace``: an existing
    ``path`` (an earlier export) is moved aside first and removed after."""
    aside = None
    if os.path.isdir(self.path) and not os.listdir(self.path):
      os.rmdir(self.path)
    elif replace and os.path.lexists(self.path):
      aside = self.stage + ".old"
      files.remove_tree(aside)
      files.replace(self.path, aside)
    files.replace(self.stage, self.path)
    if aside:
      files.remove_tree(aside)
    return self.path

