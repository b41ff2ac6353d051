/* expr: not written yet */
typedef int envfs_stub_expr;
