# One 8x8 weight tile times 8 rows of activations on the `small` preset (DIM 8), written by hand
# (docs/assembly.md). HBM holds A at 0x0 (8 rows of 8 int8) and B at 0x1000 (one 8x8 tile); the
# result (8 rows of 8 int32) goes to 0x2000. The semaphores order the three queues:
#   s1: A is in VMEM   s2: B is in VMEM   s3: the weights are loaded   s4: C is in ACC
dma hbm=0x0 local=0 len=8 path=hbm2vmem signal=s1
dma hbm=0x1000 local=64 len=8 path=hbm2vmem signal=s2
loadw vmem=64 bank=0 wait=s2>=1 signal=s3
nop.mxu wait=s1>=1
matmul vmem=0 acc=0 rows=8 bank=0 wait=s3>=1 signal=s4
dma hbm=0x2000 local=0 len=8 path=acc2hbm wait=s4>=1
end
