package i18n

import (
	"fmt"
	"strconv"
)

// Plain wraps the integer arguments of a message so they print as fmt
// prints them: x/text's printer groups digits by the language's rules
// (32768 → "32,768"), but the numbers torchmem prints are settings,
// limits, pids and counts that users compare with files and copy into
// commands. Other arguments pass through.
func Plain(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case int:
			out[i] = plainInt(v)
		case int64:
			out[i] = plainInt(v)
		case int32:
			out[i] = plainInt(v)
		case uint64:
			out[i] = plainUint(v)
		case uint32:
			out[i] = plainUint(v)
		case uint:
			out[i] = plainUint(v)
		default:
			out[i] = a
		}
	}
	return out
}

type (
	plainInt  int64
	plainUint uint64
)

// Format prints the number with fmt's own verbs and flags (%d, %x).
func (n plainInt) Format(f fmt.State, verb rune) {
	if verb == 'v' || verb == 's' {
		fmt.Fprint(f, strconv.FormatInt(int64(n), 10))
		return
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), int64(n))
}

// Format: see plainInt.
func (n plainUint) Format(f fmt.State, verb rune) {
	if verb == 'v' || verb == 's' {
		fmt.Fprint(f, strconv.FormatUint(uint64(n), 10))
		return
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), uint64(n))
}
