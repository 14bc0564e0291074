package oomexplain

type hostParser struct{ p *Parser }

func newHostParser(p *Parser) *hostParser { return &hostParser{p: p} }
func (c *hostParser) open() bool          { return false }
func (c *hostParser) feed(l *line)        {}
func (c *hostParser) flush()              {}
