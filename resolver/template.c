/* template: not written yet */
typedef int envfs_stub_template;
