"""Readers of Jepsen's etcd register logs and kv EDN histories (model/checkers/jepsen_log.py)."""

from __future__ import annotations

import math

from model.checkers.jepsen_log import parse_etcd_log, parse_kv_log
from model.checkers.lin_models import KVModel
from model.checkers.linearizable import check_operations, pair

ETCD = """\
INFO  jepsen.util - 0\t:invoke\t:write\t3
INFO  jepsen.util - 1\t:invoke\t:read\tnil
INFO  jepsen.util - 0\t:ok\t:write\t3
INFO  jepsen.util - 1\t:ok\t:read\tnil
some other log line
INFO  jepsen.util - 2\t:invoke\t:cas\t[3 4]
INFO  jepsen.util - 3\t:invoke\t:read\tnil
INFO  jepsen.util - 2\t:info\t:cas\t[3 4]
INFO  jepsen.util - 3\t:fail\t:read\t:timed-out
INFO  jepsen.util - 4\t:invoke\t:cas\t[3 1]
INFO  jepsen.util - 4\t:fail\t:cas\t[3 1]
INFO  jepsen.util - 5\t:invoke\t:read\tnil
INFO  jepsen.util - 5\t:ok\t:read\t4
INFO  jepsen.util - 6\t:invoke\t:write\t0
"""


def test_etcd_log() -> None:
    ops = pair(parse_etcd_log(ETCD.splitlines()))
    assert [(op.process, op.f, op.arg, op.status, op.result) for op in ops] == [
        (0, "write", 3, "ok", None), (1, "read", None, "ok", None), (2, "cas", (3, 4), "info", None),
        (3, "read", None, "info", None), (4, "cas", (3, 1), "fail", None), (5, "read", None, "ok", 4),
        (6, "write", 0, "info", None)]
    assert ops[0].call == 1 and ops[0].ret == 3 and math.isinf(ops[2].ret) and math.isinf(ops[6].ret)
    # reading 4 needs the unknown cas(3->4) to have taken effect, which also explains the 412 of cas(3->1)
    assert check_operations(ops).valid
    assert not check_operations(pair(parse_etcd_log(ETCD.replace(":ok\t:read\t4", ":ok\t:read\t1")
                                                    .splitlines()))).valid


def test_kv_log() -> None:
    lines = ['{:process 0, :type :invoke, :f :put, :key "a", :value "x"}',
             '{:process 1, :type :invoke, :f :get, :key "a", :value nil}',
             '{:process 0, :type :ok, :f :put, :key "a", :value "x"}',
             '{:process 1, :type :ok, :f :get, :key "a", :value "x"}',
             '{:process 2, :type :invoke, :f :append, :key "b", :value "q \\"r\\""}',
             '{:process 2, :type :ok, :f :append, :key "b", :value "q \\"r\\""}',
             '{:process 1, :type :invoke, :f :get, :key "b", :value nil}',
             '{:process 1, :type :ok, :f :get, :key "b", :value "q \\"r\\""}']
    ops = pair(parse_kv_log(lines))
    assert [(op.f, op.arg, op.result) for op in ops] == [
        ("put", ("a", "x"), None), ("get", ("a", None), "x"), ("append", ("b", 'q "r"'), None),
        ("get", ("b", None), 'q "r"')]
    assert check_operations(ops, model=KVModel()).valid
