# The MXU waits for a semaphore that nothing ever signals: the core's deadlock detector must fire.
dma hbm=0x0 local=0 len=8 path=hbm2vmem signal=s1
loadw vmem=0 bank=0 wait=s2>=1
end
