/* A global weighted-vtime scheduler in sched_ext's C dialect: every task
 * waits in one shared DSQ ordered by its vtime, which grows by the time it
 * ran scaled by 100 / weight; a task waking keeps at most one slice of
 * credit.  A CPU whose task is still runnable keeps it while its vtime is
 * still the smallest queued (Documentation/scheduler/sched-ext.rst's
 * walkthrough of a global vtime scheduler).  The same scheduler as
 * pysched.ext.examples.Simple (fifo=0), written as for the kernel:
 * build it with pysched.build_policy, run it as Simulator("wvtime"). */
#include <pysched/scx.h>

char _license[] SEC("license") = "GPL";

#define SHARED_DSQ 0
#define MAX_PIDS 1024

/* a tunable a loader would set: the preset's parameter slice_ns */
const volatile u64 slice_ns = SCX_SLICE_DFL;

UEI_DEFINE(uei);

/* the global clock: the largest vtime a task started running with */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, u32);
  __type(value, u64);
} vtime_now SEC(".maps");

/* when the task on each CPU started running */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, u32);
  __type(value, u64);
} started_at SEC(".maps");

/* the vtime each task waits in SHARED_DSQ with, plus one (0: not queued) */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, MAX_PIDS);
  __type(key, u32);
  __type(value, u64);
} queued SEC(".maps");

/* [0]: tasks in queued, [1]: the largest pid seen */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 2);
  __type(key, u32);
  __type(value, u64);
} counts SEC(".maps");

static u64 *counter(u32 k)
{
	return bpf_map_lookup_elem(&counts, &k);
}

static u64 *global_vtime(void)
{
	u32 zero = 0;
	return bpf_map_lookup_elem(&vtime_now, &zero);
}

static void set_queued(struct task_struct *p, u64 vtime_plus_one)
{
	u32 pid = p->pid;
	u64 *q = bpf_map_lookup_elem(&queued, &pid);
	u64 *nr = counter(0), *maxpid = counter(1);

	if (!q || !nr || !maxpid) {
		scx_bpf_error("pid %d beyond the %d this scheduler tracks", p->pid, MAX_PIDS);
		return;
	}
	if (*q && !vtime_plus_one)
		(*nr)--;
	else if (!*q && vtime_plus_one)
		(*nr)++;
	*q = vtime_plus_one;
	if (pid > *maxpid)
		*maxpid = pid;
}

s32 BPF_STRUCT_OPS(wvtime_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool is_idle = false;
	s32 cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);

	if (is_idle)
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
	return cpu;
}

void BPF_STRUCT_OPS(wvtime_enqueue, struct task_struct *p, u64 enq_flags)
{
	u64 *now = global_vtime();
	u64 vtime = p->scx.dsq_vtime;

	if (!now)
		return;
	/* a sleeper keeps at most one slice of credit */
	if (*now >= slice_ns && vtime < *now - slice_ns)
		vtime = *now - slice_ns;
	set_queued(p, vtime + 1);
	scx_bpf_dsq_insert_vtime(p, SHARED_DSQ, slice_ns, vtime, enq_flags);
}

void BPF_STRUCT_OPS(wvtime_dequeue, struct task_struct *p, u64 deq_flags)
{
	set_queued(p, 0);
}

void BPF_STRUCT_OPS(wvtime_dispatch, s32 cpu, struct task_struct *prev)
{
	if (prev && prev->on_rq) {
		u32 zero = 0;
		u64 *start = bpf_map_lookup_percpu_elem(&started_at, &zero, scx_bpf_task_cpu(prev));
		u64 *nr = counter(0), *maxpid = counter(1);
		u64 min = ~0ULL;

		if (!start || !nr || !maxpid)
			return;
		for (u32 pid = 0; *nr && pid <= *maxpid && pid < MAX_PIDS; pid++) {
			u64 *q = bpf_map_lookup_elem(&queued, &pid);
			if (q && *q && *q - 1 < min)
				min = *q - 1;
		}
		if (!*nr || prev->scx.dsq_vtime +
			    (scx_bpf_now() - *start) * 100 / prev->scx.weight <= min)
			return;	/* nothing dispatched: prev keeps running */
	}
	scx_bpf_dsq_move_to_local(SHARED_DSQ);
}

void BPF_STRUCT_OPS(wvtime_running, struct task_struct *p)
{
	u32 zero = 0;
	u64 *start = bpf_map_lookup_percpu_elem(&started_at, &zero, scx_bpf_task_cpu(p));
	u64 *now = global_vtime();

	set_queued(p, 0);
	if (!start || !now)
		return;
	*start = scx_bpf_now();
	if (p->scx.dsq_vtime > *now)
		*now = p->scx.dsq_vtime;
}

void BPF_STRUCT_OPS(wvtime_stopping, struct task_struct *p, bool runnable)
{
	u32 zero = 0;
	u64 *start = bpf_map_lookup_percpu_elem(&started_at, &zero, scx_bpf_task_cpu(p));

	if (start)
		p->scx.dsq_vtime += (scx_bpf_now() - *start) * 100 / p->scx.weight;
}

void BPF_STRUCT_OPS(wvtime_enable, struct task_struct *p)
{
	u64 *now = global_vtime();

	if (now)
		p->scx.dsq_vtime = *now;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(wvtime_init)
{
	return scx_bpf_create_dsq(SHARED_DSQ, -1);
}

void BPF_STRUCT_OPS(wvtime_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(wvtime_ops,
	       .select_cpu		= (void *)wvtime_select_cpu,
	       .enqueue			= (void *)wvtime_enqueue,
	       .dequeue			= (void *)wvtime_dequeue,
	       .dispatch		= (void *)wvtime_dispatch,
	       .running			= (void *)wvtime_running,
	       .stopping		= (void *)wvtime_stopping,
	       .enable			= (void *)wvtime_enable,
	       .init			= (void *)wvtime_init,
	       .exit			= (void *)wvtime_exit,
	       .name			= "wvtime");
