"""A PicoDet-style layout detector as PaddleDetection builds its PP-PicoDet layout models (PP-PicoDet:
A Better Real-Time Object Detector on Mobile Devices, Yu et al. 2021, arXiv:2111.00902), written in
torch with random init (seeded; nothing downloaded) and exported with torch.onnx.export at opset 17,
static input 1x3x320x320 as PaddleDetection's exporter writes it, 5 layout classes (text, title, list,
table, figure). Widths are scaled down so the file stays small; the structure is PicoDet's:
- backbone: LCNet (PP-LCNet) - a 3x3 stride-2 stem, then depthwise-separable blocks (depthwise 3x3
  or 5x5 + BatchNorm + HardSwish, pointwise 1x1 + BatchNorm + HardSwish), SE blocks in the last
  stages (AdaptiveAvgPool -> 1x1 conv -> ReLU -> 1x1 conv -> HardSigmoid -> Mul); strides 8/16/32 out;
- neck: CSP-PAN - 1x1 convs to one width, top-down nearest Upsample + Concat + CSP blocks
  (depthwise convs), a bottom-up path downsampling with stride-2 depthwise convs, an extra stride-64
  level as PicoDet adds;
- head: GFL-style per level (PicoHeadV2 without the post-process): shared depthwise-separable convs,
  class scores through Sigmoid, the box as reg_max+1 bins per side -> Softmax -> projection onto
  0..reg_max (the DFL integral, a 1x1 conv with fixed weights as PaddleDetection's Integral writes
  it) -> distances scaled by the stride, turned into x1y1x2y2 around each anchor point;
- outputs as the "without post-process" export writes them, concatenated over levels:
  scores [1, N, 5] and boxes [1, N, 4].
BatchNorm is kept in the modules in eval mode, so torch.onnx.export folds it into the Convs (its
default do_constant_folding with training=EVAL), as PaddleDetection's paddle2onnx export does.

usage: /work/venv/bin/python tests/gen/export_picodet.py [OUT.onnx]"""
import os
import sys
import torch
from torch import nn

here = os.path.dirname(os.path.abspath(__file__))
out = sys.argv[1] if len(sys.argv) > 1 else os.path.normpath(os.path.join(here, "..", "data", "models", "picodet-style.onnx"))
torch.manual_seed(0)
NC, REG_MAX, SIZE, WIDTH = 5, 7, 320, 48


class ConvBN(nn.Module):
    def __init__(self, cin, cout, k=1, s=1, groups=1, act=True):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.Hardswish() if act else nn.Identity()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class SE(nn.Module):
    """PP-LCNet's SE: squeeze to 1/4 the channels, ReLU, excite, HardSigmoid, scale."""
    def __init__(self, c):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(c, c // 4, 1)
        self.fc2 = nn.Conv2d(c // 4, c, 1)

    def forward(self, x):
        return x * nn.functional.hardsigmoid(self.fc2(torch.relu(self.fc1(self.pool(x)))))


class DepthwiseSeparable(nn.Module):
    def __init__(self, cin, cout, k, s, se=False):
        super().__init__()
        self.dw = ConvBN(cin, cin, k, s, groups=cin)
        self.se = SE(cin) if se else nn.Identity()
        self.pw = ConvBN(cin, cout, 1)

    def forward(self, x):
        return self.pw(self.se(self.dw(x)))


class LCNet(nn.Module):
    # (kernel, cout, stride, se) per block, PP-LCNet's NET_CONFIG at a reduced width and depth.
    STAGES = [
        [(3, 16, 1, False)],
        [(3, 24, 2, False), (3, 24, 1, False)],
        [(3, 32, 2, False), (3, 32, 1, False)],                      # stride 8
        [(3, 64, 2, False), (5, 64, 1, False), (5, 64, 1, False)],    # stride 16
        [(5, 96, 2, True), (5, 96, 1, True)],                         # stride 32
    ]

    def __init__(self):
        super().__init__()
        self.stem = ConvBN(3, 8, 3, 2)
        cin, stages = 8, []
        for blocks in self.STAGES:
            layers = []
            for k, c, s, se in blocks:
                layers.append(DepthwiseSeparable(cin, c, k, s, se))
                cin = c
            stages.append(nn.Sequential(*layers))
        self.stages = nn.ModuleList(stages)

    def forward(self, x):
        x, outs = self.stem(x), []
        for i, st in enumerate(self.stages):
            x = st(x)
            if i >= 2:
                outs.append(x)
        return outs  # strides 8, 16, 32


class CSPBlock(nn.Module):
    """PicoDet's CSPLayer with depthwise bottlenecks: two 1x1 branches, one through a 5x5 depthwise conv, concatenated, fused."""
    def __init__(self, cin, cout):
        super().__init__()
        mid = cout // 2
        self.main = ConvBN(cin, mid, 1)
        self.short = ConvBN(cin, mid, 1)
        self.dw = DepthwiseSeparable(mid, mid, 5, 1)
        self.fuse = ConvBN(2 * mid, cout, 1)

    def forward(self, x):
        return self.fuse(torch.cat([self.dw(self.main(x)), self.short(x)], 1))


class CSPPAN(nn.Module):
    def __init__(self, cins, c):
        super().__init__()
        self.lateral = nn.ModuleList([ConvBN(ci, c, 1) for ci in cins])
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.top_down = nn.ModuleList([CSPBlock(2 * c, c) for _ in cins[1:]])
        self.down = nn.ModuleList([ConvBN(c, c, 5, 2, groups=c) for _ in cins[1:]])
        self.bottom_up = nn.ModuleList([CSPBlock(2 * c, c) for _ in cins[1:]])
        self.extra_in = ConvBN(c, c, 5, 2, groups=c)  # the stride-64 level
        self.extra_out = ConvBN(c, c, 1)

    def forward(self, feats):
        x = [l(f) for l, f in zip(self.lateral, feats)]
        inner = [x[-1]]
        for i in range(len(x) - 1, 0, -1):
            inner.insert(0, self.top_down[i - 1](torch.cat([self.up(inner[0]), x[i - 1]], 1)))
        outs = [inner[0]]
        for i in range(len(x) - 1):
            outs.append(self.bottom_up[i](torch.cat([self.down[i](outs[-1]), inner[i + 1]], 1)))
        outs.append(self.extra_out(self.extra_in(outs[-1])))
        return outs  # strides 8, 16, 32, 64


class GFLHead(nn.Module):
    def __init__(self, c, strides):
        super().__init__()
        self.strides = strides
        # conv_feat shared across levels (PicoFeat with share_cls_reg): depthwise-separable convs
        self.feat = nn.Sequential(DepthwiseSeparable(c, c, 5, 1), DepthwiseSeparable(c, c, 5, 1))
        self.cls = nn.ModuleList([nn.Conv2d(c, NC, 1) for _ in strides])
        self.reg = nn.ModuleList([nn.Conv2d(c, 4 * (REG_MAX + 1), 1) for _ in strides])
        for m in self.cls:
            nn.init.constant_(m.bias, -4.595)  # prior 0.01, as GFL initialises the class bias
        # the DFL integral: a fixed 1x1 projection onto 0..reg_max
        self.register_buffer("project", torch.arange(REG_MAX + 1, dtype=torch.float32).reshape(1, REG_MAX + 1, 1, 1))

    def forward(self, feats):
        scores, boxes = [], []
        for i, (f, s) in enumerate(zip(feats, self.strides)):
            h, w = f.shape[2], f.shape[3]
            t = self.feat(f)
            cls = torch.sigmoid(self.cls[i](t)).flatten(2).transpose(1, 2)            # [1, HW, NC]
            reg = self.reg[i](t).reshape(1, 4, REG_MAX + 1, h * w).transpose(1, 2)  # [1, bins, 4, HW]
            reg = torch.softmax(reg, dim=1)
            dist = nn.functional.conv2d(reg, self.project).reshape(1, 4, h * w).transpose(1, 2) * s  # [1, HW, 4]
            ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing="ij")
            centers = (torch.stack([xs, ys], -1).reshape(1, h * w, 2) + 0.5) * s
            boxes.append(torch.cat([centers - dist[..., :2], centers + dist[..., 2:]], -1))
            scores.append(cls)
        return torch.cat(scores, 1), torch.cat(boxes, 1)


class PicoDet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = LCNet()
        self.neck = CSPPAN([32, 64, 96], WIDTH)
        self.head = GFLHead(WIDTH, [8, 16, 32, 64])

    def forward(self, image):
        return self.head(self.neck(self.backbone(image)))


model = PicoDet()
# Random BN statistics so that the folded Conv biases are not all zero.
for m in model.modules():
    if isinstance(m, nn.BatchNorm2d):
        m.running_mean.uniform_(-0.1, 0.1)
        m.running_var.uniform_(0.5, 1.5)
        m.weight.data.uniform_(0.5, 1.5)
        m.bias.data.uniform_(-0.1, 0.1)
model.eval()
x = torch.randn(1, 3, SIZE, SIZE)
torch.onnx.export(model, x, out, opset_version=17, input_names=["image"], output_names=["scores", "boxes"], dynamo=False)
print(f"wrote {out}: {os.path.getsize(out)} bytes")
