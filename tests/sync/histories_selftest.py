"""The history checker (histories_check.py) against hand-made histories:
each good one must pass, each known-bad one must fail for its reason, so
the checker cannot pass a run vacuously. Run: histories_check.py selftest
(the unit test histories_checker)."""

import io
import sys
import unittest

import histories_check as hc

NAMES = ["A", "B"]


class History:
    """A history written by hand; times in ms."""

    def __init__(self):
        self.ops = []
        self.seq = {}

    def _add(self, c, kind, name, arg, inv, cmp, res, opened=None, phase=None):
        k = self.seq.get(c, 0)
        self.seq[c] = k + 1
        self.ops.append(hc.Op(c, k, kind, name, arg, inv / 1000,
                              None if opened is None else opened / 1000,
                              None if cmp is None else cmp / 1000, res, phase))

    def write(self, c, name, value, inv, cmp, res="ok", phase="close"):
        # The open answers at once, unless the write failed there.
        opened = None if phase == "open" else inv + 1
        self._add(c, "write", name, value, inv, cmp, res, opened, phase)
        return self

    def rm(self, c, name, inv, cmp, res="ok"):
        self._add(c, "rm", name, None, inv, cmp, res)
        return self

    def mv(self, c, a, b, inv, cmp, res="ok"):
        self._add(c, "mv", a, b, inv, cmp, res)
        return self

    def check(self, final, nodes=2, **kw):
        finals = final if isinstance(final, dict) and "n0" in final else \
            {f"n{i}": dict(final) for i in range(nodes)}
        return hc.check(sorted(self.ops, key=lambda o: o.inv), NAMES, finals, **kw)


class Good(unittest.TestCase):
    """Histories a correct cluster can give: each must pass."""

    def ok(self, h, final, **kw):
        v = h.check(final, **kw)
        self.assertTrue(v.ok, v.reasons)
        return v

    def test_serial_writes_rm_mv(self):
        h = History().write(0, "A", "1", 0, 10).write(0, "B", "2", 20, 30) \
            .mv(1, "A", "B", 40, 50).write(0, "A", "3", 60, 70).rm(1, "A", 80, 90)
        v = self.ok(h, {"A": None, "B": "1"})
        # The witness is a real order: every step of an ok operation.
        self.assertEqual([s.kind for s in v.order if s.kind != "T"], ["P", "P", "mv", "P", "rm"])

    def test_concurrent_writes_either_wins(self):
        h = History().write(0, "A", "1", 0, 50).write(1, "A", "2", 10, 60)
        self.ok(h, {"A": "1", "B": None})
        h = History().write(0, "A", "1", 0, 50).write(1, "A", "2", 10, 60)
        self.ok(h, {"A": "2", "B": None})

    def test_unknown_write_may_or_may_not_land(self):
        for final in ("1", "2"):
            h = History().write(0, "A", "1", 0, 10).write(1, "A", "2", 20, None, res=None)
            self.ok(h, {"A": final, "B": None})
        h = History().write(0, "A", "1", 0, 10).write(1, "A", "2", 20, 2000, res="ETIMEDOUT")
        self.ok(h, {"A": "1", "B": None})

    def test_unknown_lands_after_later_ops_of_its_client(self):
        # The client went on after no answer; the lost request applied later.
        h = History().write(0, "A", "1", 0, 100, res="ETIMEDOUT").write(0, "A", "2", 200, 210)
        self.ok(h, {"A": "1", "B": None})

    def test_failed_write_leaves_its_empty_create(self):
        # Its open created the name empty (a commit of its own), its close failed.
        h = History().write(0, "A", "1", 0, 10, res="EIO")
        self.ok(h, {"A": "", "B": None})
        self.ok(History().write(0, "A", "1", 0, 10, res="EIO"), {"A": None, "B": None})

    def test_failed_rm_and_mv_change_nothing(self):
        h = History().write(0, "A", "1", 0, 10).rm(1, "A", 20, 30, res="EIO") \
            .mv(1, "A", "B", 40, 50, res="ENOENT")
        self.ok(h, {"A": "1", "B": None})

    def test_mv_racing_write_both_orders(self):
        h = History().write(0, "A", "old", 0, 10)
        h.write(0, "A", "new", 20, 80).mv(1, "A", "B", 30, 70)
        self.ok(h, {"A": None, "B": "new"})
        h = History().write(0, "A", "old", 0, 10)
        h.write(0, "A", "new", 20, 80).mv(1, "A", "B", 30, 70)
        self.ok(h, {"A": "new", "B": "old"})

    def test_mv_while_a_write_is_open(self):
        # The mv completed before the write's open answered: the open had
        # already picked the file, and its data moved with it.
        h = History().write(0, "B", "old", 0, 10)
        h._add(0, "write", "B", "new", 20, 60, "ok", opened=45, phase="close")
        h.mv(1, "B", "A", 22, 40)
        self.ok(h, {"A": "new", "B": None})

    def test_two_rms_of_one_value(self):
        h = History().write(0, "A", "1", 0, 10).rm(0, "A", 20, 40).rm(1, "A", 25, 45)
        self.ok(h, {"A": None, "B": None})

    def test_many_clients_interleaved(self):
        h = History()
        for k in range(30):
            h.write(k % 3, "AB"[k % 2], f"x{k}", k * 10, k * 10 + 25)
        # Writes 28 (A) and 29 (B) overlap nothing that comes after them.
        self.ok(h, {"A": "x28", "B": "x29"}, nodes=4)


class Bad(unittest.TestCase):
    """Histories no correct cluster gives: each must fail, saying why."""

    def bad(self, h, final, why, **kw):
        v = h.check(final, **kw)
        self.assertFalse(v.ok, "a bad history passed")
        self.assertTrue(any(why in r for r in v.reasons), v.reasons)

    def test_lost_acknowledged_write(self):
        h = History().write(0, "A", "1", 0, 10)
        self.bad(h, {"A": None, "B": None}, "acknowledged write is lost")

    def test_lost_write_behind_a_later_one(self):
        h = History().write(0, "A", "1", 0, 10).write(1, "A", "2", 20, 30)
        self.bad(h, {"A": "1", "B": None}, "acknowledged write is lost")
        # 2 and 3 were invoked after 1 completed: 1 cannot be last, though
        # each of 2 and 3 may be overwritten by the other.
        h = History().write(0, "A", "1", 0, 10).write(1, "A", "2", 20, 30) \
            .write(0, "A", "3", 25, 100)
        self.bad(h, {"A": "1", "B": None}, "no serial order")

    def test_failed_write_visible(self):
        h = History().write(0, "A", "1", 0, 10).write(1, "A", "2", 20, 30, res="EIO")
        self.bad(h, {"A": "2", "B": None}, "failed write is visible")

    def test_failed_open_visible(self):
        h = History().write(1, "A", "2", 20, 30, res="EIO", phase="open")
        self.bad(h, {"A": "2", "B": None}, "failed write is visible")

    def test_failed_rm_visible(self):
        h = History().write(0, "A", "1", 0, 10).rm(1, "A", 20, 30, res="EIO")
        self.bad(h, {"A": None, "B": None}, "acknowledged write is lost")
        # Two racing writes, one of them must be last: only the failed rm
        # could remove it.
        h = History().write(0, "A", "1", 0, 10).write(2, "A", "2", 5, 15) \
            .rm(1, "A", 20, 30, res="EIO")
        self.bad(h, {"A": None, "B": None}, "no serial order")

    def test_nodes_diverge(self):
        h = History().write(0, "A", "1", 0, 10)
        self.bad(h, {"n0": {"A": "1", "B": None}, "n1": {"A": None, "B": None}},
                 "nodes diverge")

    def test_value_never_written(self):
        h = History().write(0, "A", "1", 0, 10)
        self.bad(h, {"A": "1", "B": "zzz"}, "never written")

    def test_mv_racing_write_loses_it(self):
        # The stale retry of the mv: the write of new is nowhere.
        h = History().write(0, "A", "old", 0, 10)
        h.write(0, "A", "new", 20, 80).mv(1, "A", "B", 30, 70)
        self.bad(h, {"A": None, "B": "old"}, "no serial order")

    def test_mv_resurrects_a_removed_value(self):
        h = History().write(0, "A", "1", 0, 10).rm(0, "A", 20, 30).mv(1, "A", "B", 40, 50)
        self.bad(h, {"A": None, "B": "1"}, "no serial order")

    def test_rm_lost(self):
        h = History().write(0, "A", "1", 0, 10).rm(1, "A", 20, 30)
        self.bad(h, {"A": "1", "B": None}, "no serial order")

    def test_double_mv_of_one_value(self):
        # Two mvs of one value both succeeded: the second moved nothing.
        h = History().write(0, "B", "1", 0, 10).mv(1, "B", "A", 20, 50).mv(2, "B", "A", 30, 60)
        self.bad(h, {"A": "1", "B": None}, "no serial order")
        self.assertTrue(h.check({"A": "1", "B": None}, mv_absent="noop").ok)
        # The stale one overwrote a later write: lost in either model.
        h = History().write(0, "B", "x", 0, 10).mv(1, "B", "A", 20, 30) \
            .write(0, "A", "y", 40, 50).mv(2, "B", "A", 15, 60)
        self.assertFalse(h.check({"A": "y", "B": None}).ok)
        self.assertTrue(h.check({"A": "y", "B": None}, mv_absent="noop").ok)
        self.assertFalse(h.check({"A": "x", "B": None}, mv_absent="noop").ok)

    def test_mv_half_applied(self):
        # Both names at once: a mv that copied and never removed.
        h = History().write(0, "A", "1", 0, 10).mv(1, "A", "B", 20, 30)
        self.bad(h, {"A": "1", "B": "1"}, "no serial order")

    def test_no_final_state(self):
        v = hc.check([], NAMES, {})
        self.assertFalse(v.ok)

    def test_budget_exhausted_is_a_failure(self):
        h = History()
        for k in range(12):
            h.write(k % 4, "AB"[k % 2], f"x{k}", 0, 1000)
        h.write(0, "A", "last", 2000, 2010)
        v = h.check({"A": "x0", "B": None}, budget=50)
        self.assertFalse(v.ok)


class Plan(unittest.TestCase):
    def test_a_seed_gives_one_plan(self):
        faults = set(hc.FAULT_KINDS)
        self.assertEqual(hc.plan("7", faults), hc.plan("7", faults))
        self.assertEqual(hc.client_ops("7", 1, ["A", "B"]), hc.client_ops("7", 1, ["A", "B"]))
        self.assertNotEqual(hc.client_ops("7", 1, ["A", "B"]), hc.client_ops("8", 1, ["A", "B"]))

    def test_member_faults_never_overlap(self):
        for seed in range(200):
            ev = hc.plan(str(seed), set(hc.FAULT_KINDS))["events"]
            down = 0
            for _, act, _ in ev:
                down += {"kill": 1, "stop": 1, "restart": -1, "cont": -1}.get(act, 0)
                self.assertLessEqual(down, 1, ev)

    def test_values_are_unique(self):
        vals = [o[2] for c in range(6) for o in hc.client_ops("3", c, ["A", "B", "C"])
                if o[0] == "write"]
        self.assertEqual(len(vals), len(set(vals)))


def main():
    out = io.StringIO()
    r = unittest.TextTestRunner(stream=out, verbosity=2).run(
        unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__]))
    sys.stdout.write(out.getvalue())
    return 0 if r.wasSuccessful() and r.testsRun > 0 else 1
