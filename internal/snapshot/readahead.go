package snapshot

import "io"

// readAhead reads r in a goroutine, a few chunks ahead, so the read
// system calls, page-cache copies and gunzipping of a large file run on
// another core while this one decodes.
type readAhead struct {
	chunks chan []byte
	free   chan []byte
	errc   chan error // the read error (nil at EOF), once chunks is closed
	done   chan struct{}
	cur    []byte
	spent  []byte
	err    error
}

func newReadAhead(r io.Reader, size, depth int) *readAhead {
	ra := &readAhead{chunks: make(chan []byte, depth), free: make(chan []byte, depth+2),
		errc: make(chan error, 1), done: make(chan struct{})}
	go ra.run(r, size)
	return ra
}

func (ra *readAhead) run(r io.Reader, size int) {
	defer close(ra.chunks)
	made := 0
	for {
		var buf []byte
		select {
		case buf = <-ra.free:
		default:
			if made < cap(ra.free) {
				buf = make([]byte, size)
				made++
			} else {
				select {
				case buf = <-ra.free:
				case <-ra.done:
					return
				}
			}
		}
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			select {
			case ra.chunks <- buf[:n]:
			case <-ra.done:
				return
			}
		}
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = nil
			}
			ra.errc <- err
			return
		}
	}
}

// Read implements io.Reader.
func (ra *readAhead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.err != nil {
			return 0, ra.err
		}
		if ra.spent != nil {
			select {
			case ra.free <- ra.spent[:cap(ra.spent)]:
			default:
			}
			ra.spent = nil
		}
		c, ok := <-ra.chunks
		if !ok {
			ra.err = io.EOF
			select {
			case err := <-ra.errc:
				if err != nil {
					ra.err = err
				}
			default:
			}
			return 0, ra.err
		}
		ra.cur, ra.spent = c, c
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// Close stops the reading goroutine.
func (ra *readAhead) Close() {
	select {
	case <-ra.done:
	default:
		close(ra.done)
	}
}
