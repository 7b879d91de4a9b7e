#!/usr/bin/env python3
"""gen_synth.py N OUT - writes a synthetic vramtrace trace of about N events (alloc/free churn
with backtraces, copies, launches), for measuring `vramtrace report` throughput.  The sum of
what it leaves live at the peak is printed on stdout as `peak_bytes=...`."""
import random, sys

n = int(sys.argv[1]); out = open(sys.argv[2], "w")
random.seed(1)
w = out.write
w('{"ev":"header","format":"vramtrace-trace","version":1,"tracer":"0.1.0","pid":99,"ppid":1,"program":"/opt/synth","argv":["synth"],"t":1000,"wall_time":1764680000,"hostname":"h","rank":{"RANK":"0"},"page_size":4096,"backtraces":true,"checks":"record"}\n')
w('{"ev":"module","path":"/opt/synth","base":"0x555555554000","lo":"0x555555554000","hi":"0x555555600000"}\n')
w('{"ev":"device","t":2000,"dev":0,"name":"Synth","total_bytes":85899345920,"sim":true}\n')
w('{"ev":"kernel","id":1,"name":"_Z6kernelPfi","params":[[0,8],[8,4]],"layout":"elf"}\n')
t = 10000; live = {}; nxt = 0x7e0000000000; cur = peak = 0; i = 0
while i < n:
    t += 1000
    r = random.random()
    if r < 0.45 or not live:
        size = random.choice((256, 4096, 65536, 1 << 20, 3 << 20))
        a = nxt; nxt += size + 256
        site = random.randrange(40)
        w('{"ev":"alloc","t":%d,"dur":800,"tid":5,"api":"cudaMalloc","res":0,"dev":0,"addr":"0x%x","size":%d,"mem":"device","bt":["0x7f0000001234","0x%x","0x%x","0x555555556000"]}\n'
          % (t, a, size, 0x555555555000 + site * 16, 0x555555555800 + site))
        live[a] = size; cur += size; peak = max(peak, cur)
    elif r < 0.9:
        a = next(iter(live)) if random.random() < 0.5 else random.choice(list(live)) if len(live) < 64 else next(iter(live))
        size = live.pop(a); cur -= size
        w('{"ev":"free","t":%d,"dur":500,"tid":5,"api":"cudaFree","res":0,"dev":0,"addr":"0x%x","size":%d,"mem":"device"}\n' % (t, a, size))
    elif r < 0.95:
        w('{"ev":"copy","t":%d,"dur":2000,"tid":5,"api":"cudaMemcpy","res":0,"dev":0,"dst":"0x7e0000000000","src":"0x55d0c0000000","size":65536,"dir":"h2d","host":"pageable","async":false,"stream":"0x0","kind":1}\n' % t)
    else:
        w('{"ev":"launch","t":%d,"dur":3000,"tid":5,"api":"__cudaLaunchKernel","res":0,"dev":0,"k":1,"grid":[64,1,1],"block":[256,1,1],"shmem":0,"stream":"0x0"}\n' % t)
    i += 1
w('{"ev":"footer","t":%d,"events":%d,"dropped":0,"live_bytes":%d,"findings":0}\n' % (t + 1000, n + 5, cur))
print("peak_bytes=%d" % peak)
