import torch,statistics as st,json,os
d='cuda';b=torch.bfloat16
def T(f):
 for _ in range(3):f()
 torch.cuda.synchronize();a=torch.cuda.Event(1);c=torch.cuda.Event(1);r=[]
 for _ in range(10):
  a.record();f();c.record();c.synchronize();r.append(a.elapsed_time(c)*1e-3)
 return st.median(r)
M=[("qwen3-30b-a3b",2048,128,8,768),("qwen3-235b-a22b",4096,128,8,1536),("gpt-oss-120b",2880,128,4,2880),("deepseek-v3",7168,256,8,2048)]
R=[]
for n_,h,E,k,f in M:
 for e in [2,4,8,16]:
  for m in sorted({128,1024,4096*k//e}):
   for g,(K,N) in (("fc1",(h,2*f)),("fc2",(f,h))):
    x=torch.randn(e,m,K,device=d,dtype=b);w=torch.randn(e,K,N,device=d,dtype=b);o=torch.empty(e,m,N,device=d,dtype=b)
    xs=[x[i] for i in range(e)];ws=[w[i] for i in range(e)];os_=[o[i] for i in range(e)]
    tb=T(lambda:torch.bmm(x,w,out=o))
    def L():
     for i in range(e):torch.mm(xs[i],ws[i],out=os_[i])
    tl=T(L)
    def G():
     for i in range(e):torch.mm(xs[i],ws[i],out=os_[i])
    gr=torch.cuda.CUDAGraph()
    with torch.cuda.graph(gr):G()
    tg=T(gr.replay)
    R.append(dict(model=n_,gemm=g,local_experts=e,m=m,k=K,n=N,bmm_s=tb,loop_s=tl,loop_graph_s=tg))
    print("%-16s %s e=%2d m=%5d bmm %.1f loop %.1f graphed-loop %.1f us; per expert +%.2f / +%.2f us"%(n_,g,e,m,tb*1e6,tl*1e6,tg*1e6,(tl-tb)/e*1e6,(tg-tb)/e*1e6),flush=True)
    del x,w,o,xs,ws,os_,gr
json.dump(dict(gpu=torch.cuda.get_device_name(0),torch=torch.__version__,rows=R),open(os.environ["OUT"]+"/expert_loop.json","w"),indent=1)
