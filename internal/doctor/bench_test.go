package doctor

import "testing"

// BenchmarkReportCentOS7 runs every check over the CentOS 7 fixture tree
// (Python probe answered from memory): the cost of the audit itself.
func BenchmarkReportCentOS7(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		h := fixtureHost("centos7")
		h.Run = pythonSays(`{"python": "3.6.8", "numpy": "1.19.5", "torch": "1.10.2+cu113", "torch_cuda": "11.3"}`)
		_ = Run(h, Checks())
	}
}
