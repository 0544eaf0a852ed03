"""Reading a judge's reply: the verdict, its spans, structured replies, normalised text, copied text,
explanations, the reply's shape and the model the server says it ran. Pure; never HELM."""
