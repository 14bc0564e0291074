"""torchmem estimate --trace of distributed training: one rank traced.

Every rank of a data-parallel job holds what rank 0 holds, so the trace
runs rank 0 alone, in a world of the size the launcher or the program
asked for:

  - torchrun / python -m torch.distributed.run (or .launch), accelerate
    launch: the launcher is not run; its own argument parser reads its
    command line and this process becomes its rank 0 worker (the
    environment torchrun gives a worker, the script and its arguments), so
    the trace is the worker's (--real: only a world of one, the whole job);
  - init_process_group(...) makes PyTorch's own fake process group
    (torch.testing's "fake" backend, torch >= 2.1) of that world size,
    rank 0; new_group, DeviceMesh and the rest build on it;
  - the collectives (c10d ops: all_reduce, all_gather, broadcast,
    reduce_scatter, barrier, ...) are answered in _trace.py's dispatch
    mode, which sees them first: nothing is sent, the outputs are the
    tensors the program gave (the NCCL kernels write into those), and the
    work is a completed future, as a finished NCCL work is. Where data
    exists (cpu mode, the known values of meta mode) every rank is taken
    to hold rank 0's: a gather has rank 0's data in each slot, a reduce
    or a broadcast leaves it as it is;
  - DistributedDataParallel: its reducer's buckets (a second copy of the
    gradients unless gradient_as_bucket_view) are made by its C++ code
    through the same ops and are counted as gradients; the check that
    every rank has the same parameters is skipped (there is one rank);
    SyncBatchNorm runs on the traced device (its kernels by shape);
  - FSDP2 (fully_shard) and FSDP1 (FullyShardedDataParallel): FSDP's own
    code on the trace's tensors, its unsharded parameters' storage resizes
    recorded (_trace.py's _install_resize); a device tensor on meta is
    taken as made (_fsdp2_made, _fsdp1); CPU offload keeps the shards,
    their gradients and the optimizer's states as host placeholders
    (_offloading).

What is not traced: the launcher's other workers (they would be copies),
NCCL's own buffers (outside PyTorch's allocator: on the GPU but not in
the trace), FSDP1's CPU offload in cpu mode (said where the model is
wrapped). DeepSpeed's engine is traced (_trace_deepspeed.py).
"""

import contextlib
import os
import sys

from torchmem_hook import _common, _trace_values

_debug = _common.debug

# The launchers replaced by their first worker: torchrun's program name and
# the modules python -m runs, accelerate's and DeepSpeed's program names.
LAUNCHERS = ("torchrun", "torch.distributed.run", "torch.distributed.launch", "accelerate", "deepspeed")

# The module of DeepSpeed's launcher (its parser and resource rules).
DEEPSPEED_RUNNER = "deepspeed.launcher.runner"

# The world size a launcher's "gpu"/"auto" number of workers stands for
# when the user gave none (TORCHMEM_TRACE_WORLD_SIZE, --world-size).
ENV_WORLD = "TORCHMEM_TRACE_WORLD_SIZE"
# Set in the worker this process becomes: the launcher it replaced.
ENV_LAUNCHED = "TORCHMEM_TRACE_LAUNCHED"

# The first torch with the fake process group (and the work-from-future
# the collectives answer with).
MIN_TORCH = (2, 1)


def supported(torch):
    """Whether this torch can trace a process group ("" or what it lacks)."""
    v = _common.torch_version(torch)
    if (0, 0) < v < MIN_TORCH:  # (a version that does not parse is let through)
        return "torch %s has no fake process group (torch 2.1 or later has)" % torch.__version__
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available():
        return "this torch is built without torch.distributed"
    return ""


# -- the launcher ------------------------------------------------------------


def gpus():
    """The GPUs torch.cuda.device_count() answers: the launcher's workers
    on this node each have one (scripts check for them), else --world-size
    (`mp.spawn(main, nprocs=torch.cuda.device_count())`), else the one
    traced."""
    if os.environ.get(ENV_LAUNCHED):
        return max(1, _env_int("LOCAL_WORLD_SIZE", 1))
    return _default_world()


def worker(torch, launcher, args):
    """The rank 0 worker of the torchrun-style launcher running with args
    (its command line after the launcher): (argv, environment), or raises
    ValueError saying what is wrong. torchrun's own parser and its own
    config_from_args build the worker's command, so every option means
    what it means there (--no-python, -m, --run-path, launch's --use-env
    and its --local-rank argument)."""
    import torch.distributed.run as run

    try:
        if launcher.endswith(".launch"):
            import torch.distributed.launch as launch

            a = launch.parse_args(args)
        else:
            a = run.get_args_parser().parse_args(args)
    except SystemExit:
        raise ValueError("%s: its arguments do not parse (%s)" % (launcher, " ".join(args)[:200]))
    return _run_worker(a, launcher, dict(os.environ))


def _run_worker(a, launcher, env):
    """The worker torchrun's parsed arguments a make, in environment env."""
    import torch.distributed.run as run

    a.nproc_per_node = str(_nproc(a.nproc_per_node))  # gpu/auto: counted on this host, which has none
    config, cmd, cmd_args = run.config_from_args(a)
    nproc, nnodes = int(config.nproc_per_node), int(config.max_nodes)
    world = nproc * nnodes
    if callable(cmd):  # --run-path: torchrun runs the script in its own interpreter
        cmd, cmd_args = sys.executable, ["-u"] + list(cmd_args)
    argv = [cmd] + [str(x).replace("${local_rank}", "0") for x in cmd_args]
    env.update({
        "RANK": "0", "LOCAL_RANK": "0", "GROUP_RANK": "0", "ROLE_RANK": "0", "ROLE_NAME": "default",
        "WORLD_SIZE": str(world), "LOCAL_WORLD_SIZE": str(nproc), "ROLE_WORLD_SIZE": str(world),
        "GROUP_WORLD_SIZE": str(nnodes), "MASTER_ADDR": getattr(a, "master_addr", None) or "127.0.0.1",
        "MASTER_PORT": str(getattr(a, "master_port", None) or 29500), "TORCHELASTIC_RESTART_COUNT": "0",
        "TORCHELASTIC_MAX_RESTARTS": str(getattr(a, "max_restarts", 0) or 0),
        "TORCHELASTIC_RUN_ID": str(getattr(config, "run_id", None) or "none"),
        "TORCHELASTIC_USE_AGENT_STORE": "False", ENV_LAUNCHED: "%s %d" % (launcher, world),
    })
    return argv, env


def accelerate_worker(args):
    """`accelerate launch ARGS`: the worker accelerate's own parser and
    config make (its config file, --multi_gpu, --num_processes, mixed
    precision into the environment), through torchrun's for several
    processes, or its one process. Raises ValueError for what is not
    traced (DeepSpeed)."""
    from accelerate.commands import launch as al
    from accelerate.utils import launch as ul

    try:
        a = al.launch_command_parser().parse_args(args)
    except SystemExit:
        raise ValueError("accelerate launch: its arguments do not parse (%s)" % " ".join(args)[:200])
    a, defaults, mp_from_config = al._validate_launch_command(a)
    if getattr(a, "use_deepspeed", False) and not a.cpu:
        # accelerate's own DeepSpeed environment (its config into
        # ACCELERATE_DEEPSPEED_*, as its launch_command prepares it), and
        # the launcher it would run: torchrun's on one machine, the
        # deepspeed launcher's on several
        fields = list(defaults.deepspeed_config.keys()) if defaults else []
        a.deepspeed_fields_from_accelerate_config = ",".join(fields + (["mixed_precision"] if mp_from_config else []))
        cmd, env = ul.prepare_deepspeed_cmd_env(a)
        if cmd:
            return deepspeed_worker(cmd[1:], env, "accelerate")
        import torch.distributed.run as run

        targs = ul._filter_args(a, run.get_args_parser(),
                                ["--training_script", a.training_script, "--training_script_args",
                                 a.training_script_args])
        return _run_worker(targs, "accelerate", env)
    if (a.multi_gpu or getattr(a, "use_megatron_lm", False) or getattr(a, "use_fsdp", False)) and not a.cpu:
        # (accelerate launches FSDP, as these, with torchrun's launcher)
        import torch.distributed.run as run

        env = ul.prepare_multi_gpu_env(a)
        targs = ul._filter_args(a, run.get_args_parser(),
                                ["--training_script", a.training_script, "--training_script_args",
                                 a.training_script_args])
        return _run_worker(targs, "accelerate", env)
    cmd, env = ul.prepare_simple_launcher_cmd_env(a)
    env[ENV_LAUNCHED] = "accelerate 1"
    return cmd, env


def deepspeed_worker(args, env=None, launcher="deepspeed"):
    """`deepspeed ARGS`: the rank 0 worker DeepSpeed's launcher makes,
    with its own parser and its resource rules (the hostfile, --include,
    --exclude, --num_nodes, --num_gpus; all of this host's GPUs stand for
    --world-size), and its worker's command line (--local_rank=0 unless
    --no_local_rank, --module, --no_python)."""
    import importlib

    runner = importlib.import_module(DEEPSPEED_RUNNER)

    try:
        a = runner.parse_args(list(args))
    except SystemExit:
        raise ValueError("deepspeed: its arguments do not parse (%s)" % " ".join(args)[:200])
    hosts = _deepspeed_hosts(runner, a)
    nnodes = len(hosts)
    nproc = len(hosts[next(iter(hosts))]) if hosts else 0
    world = sum(len(v) for v in hosts.values())
    if world < 1:
        raise ValueError("deepspeed: no GPU is left by --include/--exclude (%s)" % " ".join(args)[:200])
    cmd = [] if a.no_python else [sys.executable, "-u"]
    if a.module:
        cmd.append("-m")
    cmd.append(a.user_script)
    if not a.no_local_rank:
        cmd.append("--local_rank=0")
    env = dict(os.environ if env is None else env)
    env.update({
        "RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": str(world), "LOCAL_SIZE": str(nproc),
        "LOCAL_WORLD_SIZE": str(nproc), "CROSS_RANK": "0", "CROSS_SIZE": str(nnodes),
        "MASTER_ADDR": a.master_addr or "127.0.0.1", "MASTER_PORT": str(a.master_port or 29500),
        ENV_LAUNCHED: "%s %d" % (launcher, world),
    })
    return cmd + list(a.user_args), env


def _deepspeed_hosts(runner, a):
    """host -> the GPUs DeepSpeed's launcher would use there."""
    pool = runner.fetch_hostfile(a.hostfile)
    if not pool:
        pool = {"localhost": _default_world()}
    if (a.num_nodes >= 0 or a.num_gpus >= 0) and (a.include or a.exclude):
        raise ValueError("deepspeed: --num_nodes/--num_gpus with --include/--exclude (DeepSpeed refuses them too)")
    hosts = runner.parse_inclusion_exclusion(pool, a.include, a.exclude)
    if a.num_nodes > 0:
        hosts = dict(list(hosts.items())[:a.num_nodes])
    if a.num_gpus > 0:
        hosts = dict((h, list(range(a.num_gpus))) for h in hosts)
    return hosts


def _nproc(v):
    v = str(v)
    if v.isdigit() and int(v) > 0:
        return int(v)
    if v in ("gpu", "auto", "cpu", "xpu"):
        return _default_world()
    raise ValueError("--nproc-per-node %r: a number of workers, gpu or auto" % v)


def become_worker(torch, launcher, args, real=False):
    """Replace this launcher process by its rank 0 worker (does not
    return), or return what is wrong. real (--real): only a world of one,
    which is the whole job; more ranks would wait for the others."""
    try:
        if launcher == "accelerate":
            if not args or args[0] != "launch":
                return ""  # another accelerate command: no program to trace
            argv, env = accelerate_worker(args[1:])
        elif launcher == "deepspeed":
            argv, env = deepspeed_worker(args)
        else:
            argv, env = worker(torch, launcher, args)
    except ValueError as e:
        return str(e)
    except Exception as e:  # a torch whose launcher this does not know
        return "%s: %s" % (launcher, _common.one_line(str(e))[:200])
    world = int(env.get("WORLD_SIZE", "1"))
    if real and world > 1:
        return ("--real runs the job and measures one process, and a world of %d needs all its ranks: measure "
                "it with %s's --nproc-per-node 1 (each rank of a data-parallel job holds as much, DDP's "
                "buckets included), or trace it without --real" % (world, launcher))
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as e:
        return "%s: cannot run %s: %s" % (launcher, argv[0], e.strerror)


# -- the process group ---------------------------------------------------------


_torch = None  # set by install


def install(torch, T):
    """init_process_group makes the fake process group; DDP's reducer
    buffers count as gradients."""
    global _torch
    _torch = torch
    dist = torch.distributed
    orig = dist.init_process_group
    orig_backend = dist.get_backend
    asked_backend = ["nccl"]  # a GPU job's default

    def get_backend(group=None):
        # the program's own backend, where it asks (code that branches on
        # "nccl" takes the GPU's path), not the fake group's
        b = orig_backend(group)
        return asked_backend[0] if str(b) == "fake" else b

    def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                           store=None, group_name="", pg_options=None, **kwargs):
        import torch.testing._internal.distributed.fake_pg as fake_pg  # registers "fake"

        world = world_size if world_size and world_size > 0 else _env_int("WORLD_SIZE", _default_world())
        asked = rank if rank not in (-1, None) else _env_int("RANK", 0)
        T.distributed(world, str(backend or "default"), asked)
        if isinstance(backend, str) and backend and ":" not in backend:
            asked_backend[0] = dist.Backend(backend)
        _fsdp(T)  # FSDP needs a process group: its modules are imported here, not by every trace
        _dtensor_rng()
        k = {"backend": "fake", "store": fake_pg.FakeStore(), "rank": 0, "world_size": world}
        if timeout is not None:
            k["timeout"] = timeout
        return orig(**k)

    orig_new_group = dist.new_group

    def new_group(*a, **k):
        # a group of the program's own backend (FSDP's hybrid sharding
        # asks get_backend for it: the program's) is the fake one
        if len(a) > 2:
            a = a[:2] + (None,) + a[3:]
        if k.get("backend") is not None:
            k = dict(k, backend=None)
        return orig_new_group(*a, **k)

    _replace(orig, init_process_group)
    _replace(orig_backend, get_backend)
    _replace(orig_new_group, new_group)
    _spawn(torch, T)
    _ddp(torch, T)
    if T.device == "meta":
        _sync_batchnorm(torch, T)


def _sync_batchnorm(torch, T):
    """SyncBatchNorm checks that its input is on a GPU by its device's
    type, meta here: the check passes for the traced device (its CUDA
    kernels run by shape, _trace_api.META_FALLBACKS)."""
    SBN = torch.nn.SyncBatchNorm
    forward = SBN.forward
    C = torch._C

    def _forward(self, input):
        name = C._get_privateuse1_backend_name
        C._get_privateuse1_backend_name = lambda: input.device.type if input.is_meta else name()
        try:
            return forward(self, input)
        finally:
            C._get_privateuse1_backend_name = name

    SBN.forward = _forward


# FSDP1's CPU offload in cpu mode: FSDP1 compares its flat parameters'
# devices with torch.device("cpu"), which cpu mode's device tensors equal
# (their device is a CPU device told apart by identity only), so it would
# keep them where they are and the trace would be of a job without offload.
FSDP1_OFFLOAD_CPU = ("FSDP1's CPU offload (CPUOffload(offload_params=True)) is traced on meta tensors only: "
                     "trace without --trace-device cpu")

# SyncBatchNorm in cpu mode: DDP refuses it on CPU weights ("SyncBatchNorm
# layers only work with GPU modules") and its kernels are CUDA's only (meta
# mode runs them by shape).
SYNC_BN_CPU = ("SyncBatchNorm under DDP is traced on meta tensors only: trace without --trace-device cpu")

# Where FSDP's entry points are, by torch version: FSDP1's modules (its
# class, its initialisation, its device handle), FSDP2's package
# (fully_shard, its parameters and their groups).
_FSDP1 = ("torch.distributed.fsdp.fully_sharded_data_parallel", "torch.distributed.fsdp._init_utils",
          "torch.distributed.fsdp._common_utils", "torch.distributed.fsdp._flat_param")
_FSDP2 = ("torch.distributed.fsdp._fully_shard", "torch.distributed._composable.fsdp")


_fsdp_installed = []  # init_process_group may run again (destroy, then init)


def _fsdp(T):
    import importlib

    if _fsdp_installed:
        return
    _fsdp_installed.append(True)
    try:
        _fsdp1(T, *[importlib.import_module(m) for m in _FSDP1])
    except Exception:
        _debug()  # not in this torch: FSDP's own errors say what it lacks
    for pkg in _FSDP2:
        try:
            param = importlib.import_module(pkg + "._fsdp_param")
            group = importlib.import_module(pkg + "._fsdp_param_group")
            init = importlib.import_module(pkg + "._fsdp_init")
        except Exception:
            continue
        _fsdp2_devices(T, init)
        _fsdp2_made(T, param.FSDPParam, group.FSDPParamGroup)
        return


def _fsdp1(T, fsdp, init, common, flat):
    """FullyShardedDataParallel (FSDP1) on the trace's device tensors: its
    own code flattens each wrapped module's parameters into one flat
    parameter, shards it, and frees and refills the unsharded one by
    storage resizes (recorded as the allocator's, _trace.py's
    _install_resize). What it asks of devices is answered as on the GPU
    (_fsdp1_devices), and a weight on meta that is the tracer's (a device
    tensor or a host placeholder) is made."""
    _fsdp1_devices(T, init, common._FSDPDeviceHandle)
    need = init._need_to_materialize_module

    def _need_to_materialize_module(*a, **k):
        T.not_meta += 1
        try:
            return need(*a, **k)
        finally:
            T.not_meta -= 1

    init._need_to_materialize_module = _need_to_materialize_module
    FSDP = fsdp.FullyShardedDataParallel
    fsdp_init = FSDP.__init__

    def __init__(self, *a, **k):
        strategy = k.get("sharding_strategy", a[2] if len(a) > 2 else None)
        # (NO_SHARD is DDP's layout: rank 0 holds every parameter)
        T.wrapped("FullyShardedDataParallel" + (" NO_SHARD" if getattr(strategy, "name", "") == "NO_SHARD" else ""))
        offload = getattr(k.get("cpu_offload", a[3] if len(a) > 3 else None), "offload_params", False)
        if offload and T.device == "cpu":
            T.end("error", "FullyShardedDataParallel", FSDP1_OFFLOAD_CPU)
        # CPU offload: each flat parameter is made on the device, sharded,
        # then moved to the host
        with _offloading(T, False, offload, says_host=offload):
            fsdp_init(self, *a, **k)
        handle = getattr(self, "_handle", None)  # (None: no parameters of its own)
        if offload and handle is not None:
            T.offloaded_params(handle.flat_param.numel())

    FSDP.__init__ = __init__
    flat_handle = getattr(flat, "FlatParamHandle", None)
    attrs = getattr(flat_handle, "init_flat_param_attributes", None)
    if attrs is not None:
        def init_flat_param_attributes(self, *a, **k):
            # (CPU offload: the shard pinned, its gradient made on the host)
            offload = getattr(self, "_offload_params", False)
            with _offloading(T, False, offload, says_host=offload):
                return attrs(self, *a, **k)

        flat_handle.init_flat_param_attributes = init_flat_param_attributes


def _fsdp1_devices(T, init, handle):
    """FSDP1's compute device is the trace's device tensors' own device
    (meta, or cpu mode's marker), which it compares them with; its device
    handle (streams, events) CUDA's; device_id moves the host placeholders."""
    from_device = handle.from_device.__func__

    def traced(d):
        return d is T.device_marker if T.device == "cpu" else getattr(d, "type", None) == "meta"

    def _from_device(cls, device):
        return from_device(cls, _torch.device("cuda") if traced(device) else device)

    handle.from_device = classmethod(_from_device)
    compute = init._get_compute_device

    def _get_compute_device(module, ignored_params, device_from_device_id, rank, device_handle):
        # (a device_id is CUDA's index: the same GPU)
        p = next(init._get_orig_params(module, ignored_params), None)
        if p is not None and T.is_device_storage(p):
            return p.device
        return compute(module, ignored_params, device_from_device_id, rank, device_handle)

    init._get_compute_device = _get_compute_device
    check_sync = init._check_module_states_for_sync_module_states

    def _check_module_states_for_sync_module_states(module_states):
        # cpu mode: the device tensors answer the marker, a CPU device
        return check_sync([t for t in module_states if not T.is_device_storage(t)])

    init._check_module_states_for_sync_module_states = _check_module_states_for_sync_module_states
    move = init._move_module_to_device

    def _move_module_to_device(module, ignored_params, ignored_buffers, device_from_device_id):
        # FSDP's test for a host tensor, a device of "cpu", misses meta
        # mode's host placeholders; nested FSDP modules' flat parameters
        # are on the device already
        if device_from_device_id is not None and T.device == "meta":
            ts = [t for t in list(module.parameters()) + list(module.buffers())
                  if t not in ignored_params and t not in ignored_buffers]
            _host_to_device(T, ts, device_from_device_id)
        return move(module, ignored_params, ignored_buffers, device_from_device_id)

    init._move_module_to_device = _move_module_to_device


def _fsdp2_devices(T, init):
    """fully_shard (FSDP2) on the trace's device tensors: the rest is
    FSDP's own code on them (DTensor shards, the all-gathers and
    reduce-scatters answered as collectives, the unsharded parameters freed
    after each forward and refilled before the next: storage resizes,
    recorded as the allocator's frees and allocations). What it asks of
    devices is answered as on the GPU."""
    import torch.distributed.device_mesh as dm

    handle = getattr(dm, "_get_device_handle", None)
    if handle is not None:
        def _get_device_handle(device_type="cuda"):
            # FSDP takes the device's module (streams) from its tensors'
            # device: on the trace's device tensors (meta, or in cpu mode
            # the CPU), CUDA's
            return handle("cuda" if device_type in ("meta", T.device) else device_type)

        _replace(handle, _get_device_handle)
    move = getattr(init, "_move_states_to_device", None)
    if move is not None:
        def _move_states_to_device(params, buffers, device):
            # a model still on the host (the HF Trainer leaves it there
            # for FSDP) is moved to the device by fully_shard (cpu mode:
            # its host tensors are on the CPU, which FSDP takes for the
            # device's marker)
            _host_to_device(T, list(params) + list(buffers), device)
            return move(params, buffers, device)

        _replace(move, _move_states_to_device)
    from_mesh = getattr(init, "_get_device_from_mesh", None)
    if T.device == "cpu" and from_mesh is not None:
        def _get_device_from_mesh(mesh):
            # cpu mode: the device tensors' device is the marker object
            d = from_mesh(mesh)
            return T.device_marker if d.type == "cuda" else d

        _replace(from_mesh, _get_device_from_mesh)


def _host_to_device(T, tensors, device):
    """Moves the tensors that are on the host to the device, as FSDP does
    with a model left there: in meta mode the tracer's host placeholders,
    on meta, which FSDP would keep there as a model not made yet."""
    def on_host(t):
        if T.device == "meta":
            # (not nested FSDP1 modules' flat parameters CPU offload keeps
            # there: FSDP moves only what it does not manage yet)
            return T.is_host(t) and not T.is_offloaded(t)
        return not T.is_device_storage(t) and not t.is_meta

    with _torch.no_grad():
        for t in tensors:
            if on_host(t):
                t.data = t.to(device)


def _is_named(x, name):
    return type(x).__name__ == name


@contextlib.contextmanager
def _offloading(T, not_meta, offload, says_host=False):
    """While FSDP asks whether a tensor is still on meta (not_meta: a device
    tensor or host placeholder is made), and, with offload, while it moves
    shards or their gradients to the host (T.offload; says_host: FSDP1's,
    which answer .device as the host)."""
    T.not_meta += int(not_meta)
    T.offload += int(offload)
    T.says_host += int(says_host)
    try:
        yield
    finally:
        T.not_meta -= int(not_meta)
        T.offload -= int(offload)
        T.says_host -= int(says_host)


def _fsdp2_made(T, FSDPParam, FSDPParamGroup):
    """FSDP2 takes a parameter on meta for one not made yet (deferred
    initialisation): it would neither keep its shard's data nor train. In
    meta mode the device's tensors are on meta; one that is a device tensor
    (not one the program made on meta itself) is taken as made."""
    def made(t):
        # (a host placeholder: a shard CPU offload keeps on the host; a
        # shard torchao's float8 all-gather wraps: the tensor inside)
        return T.device == "meta" and all(T.is_device_storage(x) or T.is_host(x) for x in _common.plain_tensors(t))

    group_init = FSDPParamGroup.__init__

    def __init__(self, *a, **k):
        T.wrapped("fully_shard")
        offload = any(_is_named(x, "CPUOffloadPolicy") for x in list(a) + list(k.values()))
        # CPU offload: each shard is made on the device, then moved to the
        # host unless FSDP sees it is still on meta (not made yet)
        with _offloading(T, offload, offload):
            group_init(self, *a, **k)
        if offload:
            T.offloaded_params(sum(p.sharded_size.numel() for p in self.fsdp_params))

    FSDPParamGroup.__init__ = __init__
    reset = FSDPParam.reset_sharded_param

    def reset_sharded_param(self):
        with _offloading(T, True, getattr(self, "offload_to_cpu", False)):
            return reset(self)

    FSDPParam.reset_sharded_param = reset_sharded_param
    post_backward = getattr(FSDPParamGroup, "post_backward", None)
    if post_backward is not None:
        def _post_backward(self, *a, **k):
            # CPU offload: the reduce-scattered gradients go to the host
            with _offloading(T, False, _is_named(getattr(self, "offload_policy", None), "CPUOffloadPolicy")):
                return post_backward(self, *a, **k)

        FSDPParamGroup.post_backward = _post_backward
    # FSDP's checks that every shard is made (not on meta) and, with CPU
    # offload, on the host: in meta mode a shard is a device tensor or a
    # host placeholder, both on meta to torch (a DTensor's device is its
    # shard's, read where the tracer does not answer it)
    for name in ("_validate_no_meta_params", "_validate_cpu_offload_params"):
        check = getattr(FSDPParamGroup, name, None)
        if check is not None:
            setattr(FSDPParamGroup, name, _unless_made(check, made))


def _unless_made(check, made):
    """FSDPParamGroup's check, passed when every shard is made."""
    def validate(self):
        if all(made(p.sharded_param) for p in self.fsdp_params):
            return None
        return check(self)

    return validate


def _dtensor_rng():
    """DTensor's random ops (a sharded model's reset_parameters) first
    synchronise a CUDA generator's state over the ranks, a real CUDA tensor
    made where the tracer's function mode is off. Its random values are
    not the trace's business: each shard draws from its own generator."""
    import importlib

    for mod in ("torch.distributed.tensor._random", "torch.distributed._tensor.random"):
        try:
            orig = importlib.import_module(mod).is_rng_supported_mesh
        except Exception:
            continue
        _replace(orig, lambda *a, **k: False)


def _default_world():
    """--world-size, where neither the program nor its launcher gives one."""
    return max(1, _env_int(ENV_WORLD, 1))


def _spawn(torch, T):
    """torch.multiprocessing.spawn(fn, args, nprocs): the older way to start
    DDP's ranks, a process each. Its children would run untraced (the trace
    is this process's); rank 0's is run here instead, fn(0, *args), in a
    world of nprocs."""
    mp = torch.multiprocessing
    orig = getattr(mp, "spawn", None)
    if orig is None:
        return

    def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
        T.emit(["D", "launcher", "mp.spawn %d" % max(1, int(nprocs))])
        if not os.environ.get("WORLD_SIZE"):
            os.environ["WORLD_SIZE"] = str(max(1, int(nprocs)))  # init_process_group's default
        fn(0, *args)
        return None

    _replace(orig, spawn, "torch.multiprocessing")


def _replace(orig, new, package="torch.distributed"):
    """new wherever package's modules hold orig by its name
    (init_device_mesh calls distributed_c10d's own)."""
    for name, mod in list(sys.modules.items()):
        if name == package or name.startswith(package + "."):
            if getattr(mod, orig.__name__, None) is orig:
                setattr(mod, orig.__name__, new)


def _env_int(name, default):
    v = os.environ.get(name, "")
    return int(v) if v.isdigit() else default


def _ddp(torch, T):
    import torch.nn.parallel.distributed as ddp

    DDP = ddp.DistributedDataParallel
    if hasattr(ddp, "_verify_param_shape_across_processes"):
        # every rank has rank 0's parameters: nothing to compare
        ddp._verify_param_shape_across_processes = lambda *a, **k: None
    init = DDP.__init__

    def __init__(self, module, device_ids=None, output_device=None, *a, **k):
        if T.device == "cpu":
            # the weights are on the CPU, where DDP takes no device_ids
            # (they only say where the inputs go: there already)
            device_ids = output_device = None
            if any(isinstance(m, torch.nn.SyncBatchNorm) for m in module.modules()):
                T.end("error", "DistributedDataParallel", SYNC_BN_CPU)
        init(self, module, device_ids, output_device, *a, **k)
        # A host input's copy to the GPU on DDP's side stream is the same
        # memory as on the main one; the stream is looked up for the
        # weights' device, meta here, which torch 2.8+ refuses.
        self.use_side_stream_for_tensor_copies = False

    DDP.__init__ = __init__
    init_helper = DDP._ddp_init_helper

    def _ddp_init_helper(self, *a, **k):
        T.wrapped("DistributedDataParallel")
        with T.counted_as("grad"):  # the reducer's buckets
            return init_helper(self, *a, **k)

    DDP._ddp_init_helper = _ddp_init_helper
    R = getattr(torch.distributed, "Reducer", None)
    rebuild = getattr(R, "_rebuild_buckets", None)
    if rebuild is None:
        return

    def _rebuild_buckets(self):
        # the first iteration's end rebuilds the buckets in the order the
        # gradients came (in the next forward): the gradients' second copy
        with T.counted_as("grad"):
            return rebuild(self)

    R._rebuild_buckets = _rebuild_buckets


# -- the collectives -------------------------------------------------------------


def collective(torch, T, func, args, kwargs):
    """A c10d op answered without sending anything (see the docstring), or
    NotImplemented for one this does not know."""
    name = func.__name__.split(".")[0] if hasattr(func, "__name__") else ""
    spec = _OPS.get(name)
    if spec is None:
        return NotImplemented
    pairing, shape, rets = spec
    for dst, src in _pairs(pairing, args):
        _fill(dst, src, shape)
    outs = _flat_tensors(args[0])
    if rets == "work":
        return _work(torch, outs)
    if rets == "none":
        return None
    return (args[rets], _work(torch, outs))


# The functional collectives (torch.distributed._functional_collectives:
# tensor parallelism's DTensor redistributions) whose GPU kernels return a
# tensor they were given, where their meta kernels make a new one: the wait
# on a collective's output returns that output, the out= all-gather its
# out, and torch 2.8+'s autograd wrapper of a collective's output wraps that
# output (a view of it here). By name: the wrapper is defined in Python, at
# the import of the module. On meta each wait counted a second copy of
# every gathered tensor (a tensor-parallel model's gathered logits twice).
_FUNCTIONAL_ALIASES = {
    "wait_tensor": lambda a, k: a[0],
    "all_gather_into_tensor_out": lambda a, k: k["out"],
    "_wrap_tensor_autograd": lambda a, k: a[0].view_as(a[0]),
}


def functional_alias(func, args, kwargs):
    """meta mode: a _c10d_functional op's answer, or NotImplemented."""
    answer = _FUNCTIONAL_ALIASES.get(func.__name__.split(".")[0])
    return NotImplemented if answer is None else answer(args, kwargs)


def _work(torch, outs):
    from torch._C._distributed_c10d import _create_work_from_future

    f = torch.futures.Future()
    f.set_result(list(outs))  # DDP's hook wants the tensors
    w = _create_work_from_future(f)
    return w.boxed() if hasattr(w, "boxed") else w


def _values(t):
    """t's data: a host tensor's own, a meta tensor's known values, or None."""
    if not t.is_meta:
        return t.detach()
    return _trace_values.shadow(t)


def _put(dst, v):
    """dst takes the values v (a host tensor of dst's number of elements)."""
    if dst.is_meta:
        _trace_values.keep(dst, v.reshape(dst.shape), True)
        return
    with _torch.no_grad():
        dst.copy_(v.reshape(dst.shape))


def _fill(dst, src, shape):
    """dst takes shape(v, n): what src's data v is in dst's n elements
    (None: unknown, dst left as it is)."""
    if dst is src:
        return
    try:
        v = _values(src)
        w = None if v is None else shape(v, dst.numel())
        if w is not None:
            _put(dst, w)
    except Exception:
        _debug()


def _as_is(v, n):
    """A broadcast's or a reduction's: every rank holds rank 0's data."""
    return v if v.numel() == n else None


def _tile(v, n):
    """A gather's: rank 0's data in each rank's slot."""
    m = v.numel()
    return v.reshape(1, m).expand(n // m, m) if m and n % m == 0 else None


def _head(v, n):
    """A scatter's: rank 0's slice, the first n elements."""
    return v.reshape(-1)[:n] if v.numel() >= n else None


def _flat_tensors(x):
    out = []
    for v in x if isinstance(x, (list, tuple)) else [x]:
        if isinstance(v, (list, tuple)):
            out.extend(_flat_tensors(v))
        elif v is not None:
            out.append(v)
    return out


def _pairs(kind, a):
    """The (output, input) tensor pairs of a c10d op's first two arguments."""
    if kind == "one":  # (Tensor out, Tensor in)
        return [(a[0], a[1])]
    if kind == "each":  # (Tensor[] outs, Tensor[] ins)
        return list(zip(a[0], a[1]))
    if kind == "first":  # (Tensor[] outs, Tensor[][] ins): rank 0's entry of each
        return [(o, ins[0]) for o, ins in zip(a[0], a[1]) if ins]
    if kind == "gather":  # (Tensor[][] outs, Tensor[] ins): every rank's slot
        return [(o, i) for outs, i in zip(a[0], a[1]) for o in outs]
    return []  # in place: the tensors keep what they hold


# The c10d ops by name: how their outputs pair with their inputs, what an
# output is of its input (_as_is, _tile, _head), and what the op returns:
# the index of the argument returned with the work, "work" or "none".
_OPS = {
    "allreduce_": (None, None, 0),
    "allreduce_coalesced_": (None, None, "work"),
    "broadcast_": (None, None, 0),
    "reduce_": (None, None, "work"),
    "barrier": (None, None, "work"),
    "monitored_barrier_": (None, None, "none"),
    "send": (None, None, "work"),
    "recv_": (None, None, "work"),  # a twin sends what this rank holds
    "recv_any_source_": (None, None, "work"),
    "allgather_": ("gather", _as_is, 0),
    "allgather_coalesced_": ("gather", _as_is, "work"),
    "gather_": ("gather", _as_is, "work"),
    "_allgather_base_": ("one", _tile, 0),
    "allgather_into_tensor_coalesced_": ("each", _tile, "work"),
    "reduce_scatter_": ("first", _as_is, 0),
    "scatter_": ("first", _as_is, 0),
    "_reduce_scatter_base_": ("one", _head, 0),
    "reduce_scatter_tensor_coalesced_": ("each", _head, "work"),
    "alltoall_": ("each", _as_is, 0),
    "alltoall_base_": ("one", _as_is, "work"),
}
