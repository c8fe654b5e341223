"""A Python provider that declares a setting (provider.py `settings`): py.numpy.naive whose runs
say in their note the value of `tag` their point was prepared under."""
from attnprof.builtin.numpy_naive import NumpyNaive, _Run


class _TaggedRun(_Run):
    def __init__(self, spec, tag):
        super().__init__(spec)
        self.tag = tag

    def note(self):
        return f"tag {self.tag}" if self.tag else ""


class Tagged(NumpyNaive):
    name = "py.test.tagged"
    description = "test: py.numpy.naive naming its setting `tag` in the note"
    settings = ({"name": "tag", "values": ["a", "b"], "help": "test: named in the note"},)

    def prepare(self, spec, io):
        return _TaggedRun(spec, self.setting_values.get("tag", ""))


PROVIDERS = [Tagged()]
