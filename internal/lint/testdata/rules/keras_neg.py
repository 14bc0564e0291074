# A Keras/TensorFlow script: not PyTorch, so no rule applies.
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
val_ds = tf.data.Dataset.from_tensor_slices(tf.zeros((4, 3))).batch(2)
for x in val_ds:
    print(model(x))
state = tf.train.Checkpoint(model=model)
