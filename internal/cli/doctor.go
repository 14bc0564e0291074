package cli

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/torchmem/torchmem/internal/doctor"
	"github.com/torchmem/torchmem/internal/gpu"
)

func init() { register("doctor", newDoctorCmd) }

// doctorFlags are doctor's command-line flags.
type doctorFlags struct {
	asJSON, verbose, noPython, list bool
	python                          string
	pythonGiven                     bool
	only                            []string
}

func newDoctorCmd(env *Env) *cobra.Command {
	var f doctorFlags
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Audit this host for memory trouble of PyTorch jobs (exit 0 ok, 1 warn, 2 fail)",
		Long: `doctor reads kernel settings, limits, cgroups, NUMA, GPUs and the PyTorch
environment, and reports each finding with a stable id, a severity
(ok / info / warn / fail), the evidence it read, why it matters for PyTorch
and the exact fix. It only reads; ` + "`torchmem tune`" + ` applies fixes.

Exit status: 0 when nothing is worse than info, 1 for warnings, 2 for failures.`,
		Example: `  torchmem doctor
  torchmem doctor --json | jq '.findings[] | select(.severity != "ok")'
  torchmem doctor --python ~/venv/bin/python --only gpu,pytorch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.pythonGiven = cmd.Flags().Changed("python")
			return runDoctor(env, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "show evidence, why and fix for every finding, not only warnings")
	fl.StringVar(&f.python, "python", "python3", "the Python interpreter that runs the jobs (for torch/numpy/CUDA versions)")
	fl.BoolVar(&f.noPython, "no-python", false, "skip the Python probe (importing torch takes seconds)")
	fl.StringSliceVar(&f.only, "only", nil, "only these categories ("+strings.Join(doctor.Categories, ", ")+"), check ids (--list-checks) or id prefixes (vm)")
	// --list-<things> like lint --list-rules and estimate --list-models;
	// --list, the old spelling, still works.
	fl.BoolVar(&f.list, "list-checks", false, "list the check ids and exit")
	fl.BoolVar(&f.list, "list", false, "list the check ids and exit")
	_ = fl.MarkHidden("list")
	return cmd
}

func runDoctor(env *Env, f doctorFlags) error {
	if f.list {
		for _, id := range doctor.IDs(doctor.Checks()) {
			if _, err := env.Stdout.Write([]byte(id + "\n")); err != nil {
				return err
			}
		}
		return nil
	}
	if err := doctor.CheckOnly(doctor.Checks(), f.only); err != nil {
		return err
	}
	b, notice := gpu.Open(gpu.Options{SysRoot: env.SysRoot, ProcRoot: env.ProcRoot})
	defer b.Close()
	h := &doctor.Host{ProcRoot: env.ProcRoot, SysRoot: env.SysRoot, Root: env.Root,
		GPU: b, GPUNotice: notice, Python: f.python, PythonGiven: f.pythonGiven, Getenv: os.Getenv, UID: os.Getuid()}
	if !f.noPython {
		h.Run = gpu.ExecRunner
	}
	rep := doctor.Run(h, doctor.Checks()).Filter(f.only)
	var err error
	if f.asJSON {
		err = writeJSON(env.Stdout, rep)
	} else {
		err = doctor.WriteText(env.Stdout, rep, f.verbose, env.lang())
	}
	if err != nil {
		return err
	}
	if code := rep.ExitCode(); code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}
