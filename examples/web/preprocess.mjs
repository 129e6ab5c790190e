// preprocess.mjs - a drawing as the digit model's input, made the way the training data
// was (the UCI optical digits behind sklearn's load_digits): the bounding box of the ink,
// fitted into a 32 x 32 square (the longer side fills it, the box centred, aspect kept),
// each 4 x 4 block of that square counted into one of 8 x 8 cells: 0 (no ink) .. 16 (all
// ink). UCI counted the "on" pixels of a binary bitmap; here a pixel's ink is its gray
// level, so the antialiased edges of a stroke count in part, and an 8 x 8 digit painted
// on the canvas at a whole number of pixels per cell comes back as it was (up to where
// centring lands between cells). Pure functions, no DOM: the page and tests share them.
//
// The UCI digits also have their strokes normalised: every class averages 19-21 cells of
// ink (the sum of the cells / 16) whatever its shape, a "1" as thick as a "0" is long. A
// drawing on the page is a set of strokes, so the page redraws them with the pen width
// that gives that much ink (penWidthFor), and then reads the pixels as above.

export const CELLS = 8;                  // the model's input is 1 x 1 x CELLS x CELLS
export const INK = 8 / 255;              // gray above this is ink (for the bounding box)
export const UCI_INK = 19.5;             // the training digits' mean ink, in cells

// the ink of the model's input, in cells: the sum of the cells / 16
export const inkOf = (cells) => cells.reduce((a, b) => a + b, 0) / 16;

// the ink's bounding box in gray (width x height, row-major, 0 = background, 1 = ink) as
// pixel edges [x0, y0, x1, y1) (x1, y1 exclusive), or null when there is no ink
export function inkBox(gray, width, height) {
    let x0 = width, y0 = height, x1 = 0, y1 = 0;
    for (let y = 0; y < height; y++)
        for (let x = 0; x < width; x++)
            if (gray[y * width + x] > INK) {
                if (x < x0) x0 = x;
                if (x >= x1) x1 = x + 1;
                if (y < y0) y0 = y;
                if (y >= y1) y1 = y + 1;
            }
    return x1 > x0 ? [x0, y0, x1, y1] : null;
}

// the mean of gray over the rectangle [ax, bx) x [ay, by) in pixel units, each pixel
// weighted by how much of it the rectangle covers; pixels outside the image count as 0
function areaMean(gray, width, height, ax, ay, bx, by) {
    let sum = 0;
    for (let y = Math.max(0, Math.floor(ay)); y < Math.min(height, Math.ceil(by)); y++) {
        const wy = Math.min(by, y + 1) - Math.max(ay, y);
        for (let x = Math.max(0, Math.floor(ax)); x < Math.min(width, Math.ceil(bx)); x++)
            sum += wy * (Math.min(bx, x + 1) - Math.max(ax, x)) * gray[y * width + x];
    }
    return sum / ((bx - ax) * (by - ay));
}

// the model's input for a drawing: {cells: Float32Array(64), 0..16, row-major; box: the ink
// box or null}; no ink gives all zeros
export function digitCells(gray, width, height) {
    const cells = new Float32Array(CELLS * CELLS), box = inkBox(gray, width, height);
    if (!box)
        return { cells, box };
    const [x0, y0, x1, y1] = box, side = Math.max(x1 - x0, y1 - y0), step = side / CELLS;
    const left = (x0 + x1 - side) / 2, top = (y0 + y1 - side) / 2;
    for (let r = 0; r < CELLS; r++)
        for (let c = 0; c < CELLS; c++) {
            const ax = left + c * step, ay = top + r * step;
            cells[r * CELLS + c] = 16 * areaMean(gray, width, height, ax, ay, ax + step, ay + step);
        }
    return { cells, box };
}

// the gray levels of RGBA pixels (a canvas's ImageData.data): the mean of red, green, blue
export function grayOf(rgba) {
    const g = new Float32Array(rgba.length / 4);
    for (let i = 0; i < g.length; i++)
        g[i] = (rgba[4 * i] + rgba[4 * i + 1] + rgba[4 * i + 2]) / 765;
    return g;
}

// the pen width to try next, given that width (pixels) made a drawing with ink cells of
// ink: the ink grows about as the width does (the box grows with it too, hence a few
// rounds); null when the width is close enough (3%) or there is no ink. At most max.
export function penWidthFor(width, ink, max) {
    if (!(ink > 0) || Math.abs(UCI_INK / ink - 1) < 0.03)
        return null;
    return Math.max(1, Math.min(max, width * UCI_INK / ink));
}
