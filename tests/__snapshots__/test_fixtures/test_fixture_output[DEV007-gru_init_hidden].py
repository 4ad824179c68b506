"""word_language_model style: init_hidden(bsz) builds the hidden state from nothing."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class RNNModel(nn.Module):
    def __init__(self, ntoken=25, ninp=8, nhid=8, nlayers=1):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.GRU(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid
        self.nlayers = nlayers

    def forward(self, input, hidden):
        emb = self.encoder(input)
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        return torch.zeros(self.nlayers, bsz, self.nhid, device=next(self.parameters()).device)


class LSTMTagger(nn.Module):
    def __init__(self, nhid=4):
        super().__init__()
        self.lstm = nn.LSTM(3, nhid)
        self.nhid = nhid

    def init_hidden(self, batch_size):
        return (torch.zeros(1, batch_size, self.nhid, device=next(self.parameters()).device),
                torch.zeros(1, batch_size, self.nhid, device=next(self.parameters()).device))

    def forward(self, seq):
        out, _ = self.lstm(seq, self.init_hidden(seq.size(1)))
        return out


model = RNNModel().to(device)
data = torch.randint(0, 25, (7, 3)).to(device)
hidden = model.init_hidden(3)
output, hidden = model(data, hidden)
print(output.shape)
tagger = LSTMTagger().to(device)
print(tagger(torch.randn(5, 2, 3).to(device)).shape)
