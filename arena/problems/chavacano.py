"""Chavacano (Zamboangueño), the Spanish-based creole of Zamboanga City, as shoppers there write it:
"Quiere yo compra un mochila negro para con mi hijo, no más de ochocientos pesos", "Tiene ba kamo ...?",
"de mil pesos pa abajo". Its frame words would read as names (a brand each) and its colours and
things as nothing at all, so two different requests in Chavacano read alike and one request in Chavacano
and in English read apart. Like Cebuano (:mod:`arena.problems.cebuano`), :mod:`arena.problems.tagalog`
folds these tables into its own. Every entry is from general knowledge of the language and of Spanish,
not from any labelled pool. Words a request uses as English words or names are left out: "mi" (Mi Band),
"man", "mio" (Yamaha's Mio), "once" (English "once", not eleven), "ano" (año without its tilde is
Tagalog's "what"). Spanish words beyond these tables stay unknown: simplemma's Spanish dictionary would
cost ~97 MB of memory the moment one request called on it.

The text reaches these tables with its accents dropped (``asks.plain``): "más" is "mas", "máximo"
"maximo".
"""

from __future__ import annotations

import re

# Pronouns, articles, prepositions, particles, aspect markers ("ta vende": sells; "ya perde": lost).
# (Only Chavacano's own: a Taglish sentence says "para", "si", "kita" too, and two function words make a
# sentence small talk, see asks._small_talk.)
FUNCTION = frozenset(
    "yo tu ele kame ustedes el la los las un una unos del con conmigo contigo que este ese esos eso esto "
    "aquel aqui alli alla ahora todo toda todos mismo gayot pirmi entonces tambien pero porque cosa quien "
    "donde cuanto cuando como".split()
)
# The words that frame an ask, greet or thank, and the labels of a value ("talla": size; "marca":
# brand; "precio": price).
FRAME = FUNCTION | frozenset(
    "kita kamo sila di de para por y si ta ya "
    "quiere kere compra comprar busca buscame buscar tiene necesita favor gracias buenas buenos dias tardes "
    "noches hola vende vender puede ayuda mira nomas solo otro otra cada grabe bien muy mucho poco "
    "hijo hija hijos amigo amiga lugar talla marca precio".split()
)
# A Chavacano sentence that asks ("Quiere yo compra ...", "Tiene ba kamo ...", "Busca kamo ...").
ASKS = r"quiere|kere|compra|busca|buscame|tiene ba|necesita"

# Chavacano content word -> its English word.
GLOSSARY: dict[str, str] = {
    # colours
    "azul": "blue", "negro": "black", "negra": "black", "blanco": "white", "blanca": "white",
    "rojo": "red", "roja": "red", "colorado": "red", "verde": "green", "amarillo": "yellow",
    "rosado": "pink", "rosada": "pink", "morado": "purple", "gris": "gray", "marron": "brown",
    "anaranjado": "orange", "dorado": "gold", "plateado": "silver",
    # sizes and who it is for
    "grande": "big", "pequeno": "small", "chiquito": "small", "chiquita": "small", "hombre": "man",
    "mujer": "woman", "nino": "kid", "nina": "kid", "bebe": "baby",
    # materials
    "goma": "rubber", "madera": "wood", "cuero": "leather", "algodon": "cotton", "acero": "steel",
    "vidrio": "glass", "plata": "silver", "oro": "gold", "plastico": "plastic",
    # things
    "zapatos": "shoe", "zapato": "shoe", "zapatilla": "slipper", "camisa": "shirt", "pantalon": "pants",
    "mochila": "backpack", "reloj": "watch", "mesa": "table", "silla": "chair", "cama": "bed",
    "almohada": "pillow", "caja": "box", "clavo": "nail", "martillo": "hammer", "botella": "bottle",
    "vaso": "glass", "taza": "cup", "olla": "pot", "cuchillo": "knife", "cuchara": "spoon",
    "tenedor": "fork", "plato": "plate", "libro": "book", "lapiz": "pencil", "papel": "paper",
    "bolsa": "bag", "sombrero": "hat", "gorra": "cap", "telefono": "phone", "celular": "cellphone",
    "lampara": "lamp", "abanico": "fan", "ventilador": "fan", "estufa": "stove", "nevera": "fridge",
    "tienda": "shop", "juguete": "toy", "maleta": "suitcase", "perro": "dog", "gato": "cat",
    "agua": "water", "cafe": "coffee", "azucar": "sugar", "leche": "milk", "arroz": "rice",
    # what riddles ask about
    "planeta": "planet", "bandera": "flag", "numero": "number", "nombre": "name", "pais": "country", "ciudad": "city", "isla": "island", "montana": "mountain",
    "heroe": "hero", "presidente": "president", "estrella": "star", "dia": "day", "semana": "week",
}  # fmt: skip

# Spanish numerals beyond the Cebuano tables' ("uno", "dos", "tres" and "mil" are there): units, tens,
# the hundreds as whole numbers ("quinientos", 500), and "y" joining tens and units ("treinta y cinco").
UNITS = {"cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8, "nueve": 9}
TENS = {
    "diez": 10, "veinte": 20, "treinta": 30, "cuarenta": 40, "cincuenta": 50, "sesenta": 60, "setenta": 70,
    "ochenta": 80, "noventa": 90,
}  # fmt: skip
WHOLE = {
    "doce": 12, "trece": 13, "catorce": 14, "quince": 15, "cien": 100, "ciento": 100, "doscientos": 200,
    "trescientos": 300, "cuatrocientos": 400, "quinientos": 500, "seiscientos": 600, "setecientos": 700,
    "ochocientos": 800, "novecientos": 900,
}  # fmt: skip
LINKERS = ("y",)

# Price bounds and shares as English words: "no más de 500" (at most), "hasta mil pesos" (up to),
# "menos de 1,000" (under), "más de 2k" (over), "de mil pesos pa abajo" (or less), "ochocientos pesos
# el máximo" (max), "ocho porciento" (percent), "mil pesos" (a thousand, where "mil" opens the amount).
BOUNDS = (
    (re.compile(r"\bno mas de\b"), "up to"),
    (re.compile(r"\bhasta\b"), "up to"),
    (re.compile(r"\bmenos de\b"), "under"),
    (re.compile(r"\bmas de\b"), "over"),
    (re.compile(r"\b(?:pa|para) abajo\b"), "or less"),
    (re.compile(r"\b(?:pa|para) arriba\b"), "or more"),
    (re.compile(r"\b(?:el )?maximo\b"), "max"),
    (re.compile(r"\bpor ?ciento\b"), "percent"),
)
BOUND_CUE = ("no mas de", "hasta", "menos de", "mas de", "abajo", "arriba", "maximo", "porciento", "por ciento")
# Services said in Chavacano (as fixed phrases, beside the English and Tagalog ones).
FREE_SHIPPING = (
    "envio gratis", "libre el envio", "libre envio", "gratis el envio", "libre el delivery", "libre el shipping",
)  # fmt: skip
COD = ("pago contra entrega", "contra entrega")
