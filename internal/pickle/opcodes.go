package pickle

// Opcode bytes of the pickle protocol (CPython Lib/pickletools.py). Only the
// ones step (ops.go) handles are decoded; every other known opcode is named
// in the refusal error so a user sees what the file tried to do.
const (
	opMark           = '('
	opStop           = '.'
	opPop            = '0'
	opPopMark        = '1'
	opBinInt         = 'J'
	opBinInt1        = 'K'
	opBinInt2        = 'M'
	opNone           = 'N'
	opBinUnicode     = 'X'
	opAppend         = 'a'
	opEmptyDict      = '}'
	opAppends        = 'e'
	opBinGet         = 'h'
	opLongBinGet     = 'j'
	opEmptyList      = ']'
	opBinPut         = 'q'
	opLongBinPut     = 'r'
	opSetItem        = 's'
	opTuple          = 't'
	opEmptyTuple     = ')'
	opSetItems       = 'u'
	opBinFloat       = 'G'
	opDict           = 'd'
	opList           = 'l'
	opProto          = 0x80
	opTuple1         = 0x85
	opTuple2         = 0x86
	opTuple3         = 0x87
	opNewTrue        = 0x88
	opNewFalse       = 0x89
	opLong1          = 0x8a
	opLong4          = 0x8b
	opShortBinUnicod = 0x8c
	opBinUnicode8    = 0x8d
	opMemoize        = 0x94
	opFrame          = 0x95
)

// opNames names every opcode of protocols 0-5, allowed or not.
var opNames = map[byte]string{
	'(': "MARK", '.': "STOP", '0': "POP", '1': "POP_MARK", '2': "DUP",
	'F': "FLOAT", 'I': "INT", 'J': "BININT", 'K': "BININT1", 'L': "LONG",
	'M': "BININT2", 'N': "NONE", 'P': "PERSID", 'Q': "BINPERSID", 'R': "REDUCE",
	'S': "STRING", 'T': "BINSTRING", 'U': "SHORT_BINSTRING", 'V': "UNICODE",
	'X': "BINUNICODE", 'a': "APPEND", 'b': "BUILD", 'c': "GLOBAL", 'd': "DICT",
	'}': "EMPTY_DICT", 'e': "APPENDS", 'g': "GET", 'h': "BINGET", 'i': "INST",
	'j': "LONG_BINGET", 'l': "LIST", ']': "EMPTY_LIST", 'o': "OBJ", 'p': "PUT",
	'q': "BINPUT", 'r': "LONG_BINPUT", 's': "SETITEM", 't': "TUPLE",
	')': "EMPTY_TUPLE", 'u': "SETITEMS", 'G': "BINFLOAT",
	0x80: "PROTO", 0x81: "NEWOBJ", 0x82: "EXT1", 0x83: "EXT2", 0x84: "EXT4",
	0x85: "TUPLE1", 0x86: "TUPLE2", 0x87: "TUPLE3", 0x88: "NEWTRUE",
	0x89: "NEWFALSE", 0x8a: "LONG1", 0x8b: "LONG4", 'B': "BINBYTES",
	'C': "SHORT_BINBYTES", 0x8c: "SHORT_BINUNICODE", 0x8d: "BINUNICODE8",
	0x8e: "BINBYTES8", 0x8f: "EMPTY_SET", 0x90: "ADDITEMS", 0x91: "FROZENSET",
	0x92: "NEWOBJ_EX", 0x93: "STACK_GLOBAL", 0x94: "MEMOIZE", 0x95: "FRAME",
	0x96: "BYTEARRAY8", 0x97: "NEXT_BUFFER", 0x98: "READONLY_BUFFER",
}

// refusedWhy says why a known opcode outside the allow-list is refused.
func refusedWhy(op byte) string {
	switch op {
	case 'c', 0x93, 'R', 'b', 'i', 'o', 0x81, 0x92, 'P', 'Q', 0x82, 0x83, 0x84:
		return "it can import or call arbitrary Python objects"
	}
	return "it is outside the subset memory snapshots use"
}

// OpName returns the pickletools name of op, or its hex value.
func OpName(op byte) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return "unknown opcode"
}
