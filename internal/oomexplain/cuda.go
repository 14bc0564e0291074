package oomexplain

type cudaParser struct{ p *Parser }

func newCUDAParser(p *Parser) *cudaParser { return &cudaParser{p: p} }
func (c *cudaParser) open() bool          { return false }
func (c *cudaParser) feed(l *line)        {}
func (c *cudaParser) flush()              {}
