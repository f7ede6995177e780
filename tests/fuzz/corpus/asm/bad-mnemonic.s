dma.load vmem[0], hbm[0x100], rows=8
bogus r1, r2
